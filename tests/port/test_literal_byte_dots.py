"""``__dp4a`` and ``__dp2a_lo``/``__dp2a_hi`` in literal ports
(:mod:`cuda2nki.lift.literal.bytedots`): signed and unsigned operands over the whole 32-bit range,
literal and uniform accumulators, an accumulation loop and a grid-stride loop, and the vector
overloads (``char4``/``uchar4``, ``short2``/``ushort2``: :mod:`cuda2nki.lift.literal.vecdots`),
bit-exact against the SIMT interpreter."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import run_against_simt, tensor_param

_FULL = [-(2**31), 2**31 - 1]


def _binding(dtype: str, block: int, grid: str) -> dict:
    rng = _FULL if dtype == "int32" else [0, 2**32 - 1]
    return {
        "kernel": "k",
        "launch": {"grid": [grid], "block": [block]},
        "params": {
            "a": tensor_param(["n"], "in", dtype, rng),
            "b": tensor_param(["n"], "in", dtype, rng),
            "c": tensor_param(["n"], "in", dtype, rng),
            "out": tensor_param(["n"], "out", dtype),
            "n": 1000,
            "bias": 5,
        },
        "check": {"shapes": [{"n": 77}, {"n": 300}]},
    }


def _map(t: str, body: str) -> str:
    return (
        f"__global__ void k(const {t}* a, const {t}* b, const {t}* c, {t}* out, int n, "
        f"{t} bias) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) out[i] = {body};\n}}\n"
    )


_STRIDED = """__global__ void k(const T* a, const T* b, const T* c, T* out, int n, T bias) {
    for (int j = threadIdx.x + blockIdx.x * blockDim.x; j < n; j += blockDim.x * gridDim.x) {
        T acc = bias;
        for (int r = 0; r < 3; ++r) acc = __dp4a(a[j], b[(j + r) % n], acc);
        out[j] = __dp2a_hi(acc, c[j], acc) - __dp2a_lo(c[j], a[j], 0);
    }
}
"""

KERNELS = [
    ("dp4a_signed", "int32", _map("int", "__dp4a(a[i], b[i], c[i])"), 64, "ceil_div(n, 64)"),
    ("dp4a_unsigned", "uint32", _map("unsigned int", "__dp4a(a[i], b[i], c[i])"), 32,
     "ceil_div(n, 32)"),
    ("dp4a_constant_operand", "int32", _map("int", "__dp4a(a[i], 0x01FF7F80, bias)"), 128,
     "ceil_div(n, 128)"),
    ("dp2a_lo_hi_signed", "int32",
     _map("int", "__dp2a_lo(a[i], b[i], c[i]) ^ __dp2a_hi(b[i], a[i], 7)"), 32, "ceil_div(n, 32)"),
    ("dp2a_unsigned", "uint32",
     _map("unsigned", "__dp2a_hi(a[i], b[i], c[i]) + __dp2a_lo(a[i], b[i], 0u)"), 64,
     "ceil_div(n, 64)"),
    ("accumulation_loop_signed", "int32", _STRIDED.replace("T", "int"), 64, "4"),
    ("accumulation_loop_unsigned", "uint32", _STRIDED.replace("T", "unsigned"), 32, "3"),
]  # fmt: skip


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "dtype", "src", "block", "grid"), KERNELS,
                         ids=[k[0] for k in KERNELS])  # fmt: skip
def test_byte_dots_port_literally_and_exactly(name, dtype, src, block, grid, target, tmp_path):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict(_binding(dtype, block, grid), path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches


_VECTOR = """__global__ void k(const B* x, const B* y, O* z, int n) {
    const V4* qx = (const V4*)x;
    const V4* qy = reinterpret_cast<const V4*>(y);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        V4 a = qx[i];
        z[i] = __dp4a(a, qy[i], (O)i) + __dp2a_lo(make_H2(a.x, 300), qy[i], 1)
               - __dp2a_hi(make_H2(a.w, a.y), qx[i], 0);
    }
}
"""

VECTOR_KERNELS = [
    ("char4_signed", "int8", _VECTOR.replace("V4", "char4").replace("B", "char")
     .replace("H2", "short2").replace("O", "int")),
    ("uchar4_unsigned", "uint8", _VECTOR.replace("V4", "uchar4").replace("B", "unsigned char")
     .replace("H2", "ushort2").replace("O", "unsigned")),
]  # fmt: skip


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("name", "dtype", "src"), VECTOR_KERNELS, ids=[k[0] for k in VECTOR_KERNELS]
)
def test_vector_byte_dots_port_literally(name, dtype, src, target, tmp_path) -> None:
    out = "int32" if dtype == "int8" else "uint32"
    rng = [-128, 127] if dtype == "int8" else [0, 255]
    bdict = {
        "kernel": "k",
        "launch": {"grid": ["3"], "block": [64]},
        "params": {
            "x": tensor_param(["n", 4], "in", dtype, rng),
            "y": tensor_param(["n", 4], "in", dtype, rng),
            "z": tensor_param(["n"], "out", out),
            "n": 1000,
        },
        "check": {"shapes": [{"n": 77}, {"n": 300}]},
    }
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict(bdict, path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches
