"""Rounding-and-narrowing maps (float values quantised to bytes, shorts, halves) port through the
map recogniser, not thread by thread, and compute exactly what the CUDA kernel computes: C's
truncation toward zero, ``roundf`` (halfway away from zero), ``rintf`` / ``__float2int_rn``
(halfway to even), ``__saturatef``, clamps with ``fminf`` / ``fmaxf`` / ``min`` / ``max``,
unsigned and signed wraparound of narrowing conversions, bytes packed into a word."""

from __future__ import annotations

import pytest

from tests.port.acceptance import assert_ports_exactly, grid_binding, tensor_param

_SHAPES = [{"n": 300}, {"n": 5}]


def _binding(out: str, block: int = 128, rng: list | None = None) -> dict:
    params = {
        "x": tensor_param(["n"], "in", "float32", rng or [-4.0, 4.0]),
        "y": tensor_param(["n"], "out", out),
        "n": 1000,
    }
    return grid_binding([f"ceil_div(n, {block})"], params, _SHAPES, block=block)


def _guarded(ctype: str, body: str) -> str:
    return (
        f"__global__ void k(const float* x, {ctype}* y, int n) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    float v = x[i];\n"
        f"    y[i] = {body};\n"
        "}\n"
    )


def _strided(ctype: str, body: str) -> str:
    return (
        f"__global__ void k(const float* src, {ctype}* dst, int count) {{\n"
        "    for (int e = threadIdx.x + blockIdx.x * blockDim.x; e < count;\n"
        "         e += blockDim.x * gridDim.x) {\n"
        "        float v = src[e];\n"
        f"        dst[e] = {body};\n"
        "    }\n"
        "}\n"
    )


# (name, C type of the output, its binding dtype, the stored expression of ``v`` and ``i``)
BYTES = [
    ("uchar_of_roundf_with_offset", "unsigned char", "uint8", "(unsigned char)((int)roundf(v * 40.0f) + 128)"),
    ("uchar_of_float2int_rn_wraps", "unsigned char", "uint8", "(unsigned char)(__float2int_rn(v * 97.0f) - 3)"),
    ("uchar_of_saturated_scale", "unsigned char", "uint8", "(unsigned char)rintf(__saturatef(v * 0.25f + 0.5f) * 255.0f)"),
    ("uchar_of_fminf_fmaxf_clamp", "unsigned char", "uint8", "(unsigned char)roundf(fminf(fmaxf(v * 64.0f + 128.0f, 0.0f), 255.0f))"),
    ("uchar_of_int_min_max_clamp", "uint8_t", "uint8", "(uint8_t)min(max(__float2int_rn(v * 50.0f) + 100, 0), 255)"),
    ("schar_of_rintf", "signed char", "int8", "(signed char)rintf(v * 31.0f)"),
    ("schar_wraps_from_int", "char", "int8", "(char)((int)(v * 1000.0f) ^ 0x55)"),
    ("short_wraps_from_truncation", "short", "int16", "(short)((int)(v * 5000.0f) * 13)"),
    ("short_wraps_from_rounded_int", "short", "int16", "(short)((int)rintf(v * 1.0e4f) * 7)"),
    ("ushort_of_nearbyintf", "unsigned short", "uint16", "(unsigned short)((int)nearbyintf(v * 9000.0f) + 40000)"),
    ("uchar_of_comparison", "unsigned char", "uint8", "(unsigned char)(v * 3.0f <= (float)(i % 7) - 2.0f)"),
    ("schar_of_logical_or", "signed char", "int8", "(signed char)(v < -1.0f || v > 1.5f)"),
    ("halfway_rintf_to_even", "float", "float32", "rintf((float)(i % 23 - 11) * 0.5f) + v * 0.0f"),
    ("halfway_roundf_away", "float", "float32", "roundf((float)(i % 23 - 11) * 0.5f) + v * 0.0f"),
    ("halfway_float2int_rn", "int", "int32", "__float2int_rn((float)(i % 19 - 9) * 0.5f + v * 0.0f)"),
]  # fmt: skip


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "ctype", "dtype", "body"), BYTES, ids=[b[0] for b in BYTES])
def test_quantised_outputs_port_through_the_map_recogniser(
    name, ctype, dtype, body, target, tmp_path
) -> None:
    src = _guarded(ctype, body)
    assert_ports_exactly(f"round/{name}", src, _binding(dtype), target, tmp_path)


STRIDED = [
    ("uchar_grid_stride_roundf", "unsigned char", "uint8", "(unsigned char)roundf(fminf(fmaxf(v, -1.0f), 1.0f) * 127.5f + 127.5f)"),
    ("schar_grid_stride_wrap", "int8_t", "int8", "(int8_t)(__float2int_rn(v * 300.0f))"),
]  # fmt: skip


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "ctype", "dtype", "body"), STRIDED, ids=[s[0] for s in STRIDED])
def test_grid_stride_quantisation_ports_through_the_map_recogniser(
    name, ctype, dtype, body, target, tmp_path
) -> None:
    params = {
        "src": tensor_param(["count"], "in", "float32", [-2.0, 2.0]),
        "dst": tensor_param(["count"], "out", dtype),
        "count": 1000,
    }
    shapes = [{"count": 700}, {"count": 3}]
    bdict = grid_binding(["ceil_div(count, 256)"], params, shapes, block=256)
    assert_ports_exactly(f"round/{name}", _strided(ctype, body), bdict, target, tmp_path)


# kernels whose binding is inferred from the host code: bytes packed into a word with shifts,
# and into a uchar4 record (integer division and remainder by powers of two on bytes)
PACKED = {
    "rgba_shifted_into_uint32": (
        "__global__ void pack_rgba(const float* r, const float* g, const float* b,\n"
        "                          unsigned int* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) {\n"
        "    unsigned int R = (unsigned char)__float2int_rn(__saturatef(r[i]) * 255.0f);\n"
        "    unsigned int G = (unsigned char)__float2int_rn(__saturatef(g[i]) * 255.0f);\n"
        "    unsigned int B = (unsigned char)__float2int_rn(__saturatef(b[i]) * 255.0f);\n"
        "    out[i] = R | (G << 8) | (B << 16) | (255u << 24);\n"
        "  }\n}\n"
        "void go(const float* r, const float* g, const float* b, unsigned int* out, int n) {\n"
        "  pack_rgba<<<(n + 255) / 256, 256>>>(r, g, b, out, n);\n}\n"
    ),
    "luma_into_uchar4": (
        "__global__ void to_rgba8(const float* lum, uchar4* px, int count) {\n"
        "  int k = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (k >= count) return;\n"
        "  float v = fminf(fmaxf(lum[k], 0.0f), 1.0f);\n"
        "  unsigned char c = (unsigned char)rintf(v * 255.0f);\n"
        "  px[k] = make_uchar4(c, (unsigned char)(255 - c), (unsigned char)(c / 2),\n"
        "                      (unsigned char)(c % 16 * 16));\n}\n"
        "void go(const float* lum, uchar4* px, int count) {\n"
        "  to_rgba8<<<(count + 127) / 128, 128>>>(lum, px, count);\n}\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(PACKED))
def test_packed_byte_outputs_port_through_the_map_recogniser(case, target, tmp_path) -> None:
    from cuda2nki.diagnostics import Severity
    from cuda2nki.fidelity.check import check
    from cuda2nki.pipeline import port_file

    cu = tmp_path / "pack.cu"
    cu.write_text(PACKED[case])
    res = port_file(cu, target=target)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    assert "_c2n_sdivmod(" not in res.source.split("@nki.jit")[-1]  # shifts, not a division
    port = tmp_path / "pack_port.py"
    port.write_text(res.source)
    rep = check(cu, port, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, (rep.numerics, above)
