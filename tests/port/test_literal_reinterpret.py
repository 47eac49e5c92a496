"""A buffer read through a pointer to another 32-bit element type (``(int*)&pool[64]`` in a
float buffer, ``(float*)`` over an int one, ``const unsigned*`` over a float input) is a dtype
view of the tensor in literal ports: the bits written through one type are read through the
other, exactly as in CUDA.  A write through the view is a write of the tensor, so no earlier load
is reused across it.  A view of another element size is refused."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, run_against_simt, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

_BIND = grid_binding(
    ["ceil_div(n, 64)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1000},
    [{"n": 77}, {"n": 130}],
    block=64,
)

KERNELS = {
    # the same element read as float, its sign bit flipped through an int view, read again
    "sign-flip-through-int-view": (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  __shared__ float f[64];\n"
        "  int* iv = (int*)f;\n"
        "  int t = threadIdx.x, i = blockIdx.x * 64 + t;\n"
        "  f[t] = i < n ? x[i] : 0.0f;\n"
        "  __syncthreads();\n"
        "  float a = f[t];\n"
        "  iv[t] = iv[t] ^ 0x80000000;\n"
        "  float b = f[t];\n"
        "  if (i < n) y[i] = a + 2.0f * b;\n}\n"
    ),
    # an int buffer whose upper half is written as floats by one thread, read by another
    "float-half-of-an-int-buffer": (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  __shared__ int w[128];\n"
        "  float* hi = reinterpret_cast<float*>(&w[64]);\n"
        "  int t = threadIdx.x, i = blockIdx.x * 64 + t;\n"
        "  w[t] = i;\n"
        "  hi[t] = i < n ? x[i] * 0.5f : 0.0f;\n"
        "  __syncthreads();\n"
        "  if (i < n) y[i] = hi[63 - t] + (float)w[63 - t];\n}\n"
    ),
    # a float input read as unsigned bits: the exponent field
    "unsigned-view-of-an-input": (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  const unsigned* bits = (const unsigned*)x;\n"
        "  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n;"
        " i += blockDim.x * gridDim.x)\n"
        "    y[i] = (float)((bits[i] >> 23) & 255u);\n}\n"
    ),
}


@pytest.mark.parametrize("case", sorted(KERNELS))
def test_a_word_view_ports_exactly(case, tmp_path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(KERNELS[case])
    run, points = run_literal_exactly(cu, _BIND, "nki", tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def test_the_lifter_does_not_read_a_word_view_as_converted_values(tmp_path) -> None:
    """A kernel reading a float buffer's bits is lifted with a bitcast, never a conversion
    (which would turn 3.5f into 3u): the default pipeline's port is bit-exact."""
    cu = tmp_path / "k.cu"
    cu.write_text(KERNELS["unsigned-view-of-an-input"])
    binding = binding_from_dict({"kernel": "k", **_BIND}, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    assert ".view(nl.uint32)" in res.source or ".view(nl.int32)" in res.source
    port = tmp_path / "k_port.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert not run.mismatches, run.mismatches


def test_a_view_of_another_element_size_is_refused(tmp_path) -> None:
    """Bytes of an int buffer: four elements per word, which the literal lowering does not
    address; refused rather than read as whole words."""
    cu = tmp_path / "k.cu"
    cu.write_text(
        "__global__ void k(const int* x, int* y, int n) {\n"
        "  const unsigned char* b = (const unsigned char*)x;\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = (int)b[4 * i + 1];\n}\n"
    )
    bind = grid_binding(
        ["ceil_div(n, 64)"],
        {"x": tensor_param(["n"], "in", "int32"), "y": tensor_param(["n"], "out", "int32"),
         "n": 1000},
        [{"n": 77}, {"n": 130}],
        block=64,
    )  # fmt: skip
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **bind}, path=str(cu)))
    assert res.source is None
    assert any("another element size" in d.message for d in res.diagnostics), [
        d.message for d in res.diagnostics
    ]
