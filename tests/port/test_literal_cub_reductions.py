"""CUB's block and warp reductions in literal ports, computed in the order the SIMT interpreter
gives CUB (a shuffle-down tree in each warp, then the warps in order), so that float sums match
it exactly: ``BlockReduce::Sum`` with and without a count of valid items, ``Reduce`` with
``cub::Max()``/``cub::Min()`` on ints, ``WarpReduce::Sum`` per warp, functor structs of the program's own, sums of vectors with the
program's ``operator+`` (lane by lane), block sizes 64 to 256.
A scan is still refused, naming the collective."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

TARGETS = ["nki", "legacy"]

#: name -> (block threads, output elements per block, element type, kernel)
KERNELS = {
    "block_sum": (
        128,
        1,
        "float",
        (
            "#include <cub/cub.cuh>\n"
            "#define BT 128\n"
            "__global__ void k(const float* x, float* y, int n) {\n"
            "    typedef cub::BlockReduce<float, BT> BlockSum;\n"
            "    __shared__ typename BlockSum::TempStorage scratch;\n"
            "    int i = blockIdx.x * BT + threadIdx.x;\n"
            "    float v = 0.0f;\n"
            "    if (i < n) v = x[i];\n"
            "    float total = BlockSum(scratch).Sum(v);\n"
            "    if (threadIdx.x == 0) y[blockIdx.x] = total;\n"
            "}\n"
        ),
    ),
    "block_sum_valid_items": (
        256,
        1,
        "float",
        (
            "#include <cub/cub.cuh>\n"
            "__global__ void k(const float* x, float* y, int n) {\n"
            "    using Red = cub::BlockReduce<float, 256>;\n"
            "    __shared__ Red::TempStorage st;\n"
            "    int base = blockIdx.x * 256;\n"
            "    float v = base + threadIdx.x < n ? 2.0f * x[base + threadIdx.x] : -1.0f;\n"
            "    float s = Red(st).Sum(v, n - base);\n"
            "    if (threadIdx.x == 0) { y[blockIdx.x] = s; }\n"
            "}\n"
        ),
    ),
    "block_max_of_ints": (
        64,
        1,
        "int",
        (
            "#include <cub/cub.cuh>\n"
            "__global__ void k(const int* x, int* y, int n) {\n"
            "    typedef cub::BlockReduce<int, 64> R;\n"
            "    __shared__ typename R::TempStorage t;\n"
            "    int g = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    int m = R(t).Reduce(g < n ? x[g] : -2147483647 - 1, cub::Max());\n"
            "    int lo = R(t).Reduce(g < n ? x[g] : 2147483647, cub::Min());\n"
            "    if (threadIdx.x == 0) y[blockIdx.x] = m - lo;\n"
            "}\n"
        ),
    ),
    "vector_sum_with_operator": (
        64,
        3,
        "float",
        (
            "#include <cub/cub.cuh>\n"
            "__device__ float3 operator+(const float3& a, const float3& b) {\n"
            "    return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);\n"
            "}\n"
            "__global__ void k(const float* x, float* y, int n) {\n"
            "    typedef cub::BlockReduce<float3, 64> BR3;\n"
            "    __shared__ typename BR3::TempStorage tmp;\n"
            "    int i = blockIdx.x * 64 + threadIdx.x;\n"
            "    float v = i < n ? x[i] : 0.0f;\n"
            "    float3 s = BR3(tmp).Sum(make_float3(v, v * v, 1.0f));\n"
            "    if (threadIdx.x == 0) { y[3 * blockIdx.x] = s.x; y[3 * blockIdx.x + 1] = s.y;\n"
            "                            y[3 * blockIdx.x + 2] = s.z; }\n"
            "}\n"
        ),
    ),
    "vector_lanes_assigned": (
        128,
        2,
        "float",
        (
            "#include <cub/cub.cuh>\n"
            "__device__ float2 operator+(float2 a, float2 b) {\n"
            "    return make_float2(a.x + b.x, a.y + b.y);\n"
            "}\n"
            "__global__ void k(const float* x, float* y, int n) {\n"
            "    using R2 = cub::BlockReduce<float2, 128>;\n"
            "    __shared__ R2::TempStorage st;\n"
            "    int i = blockIdx.x * 128 + threadIdx.x;\n"
            "    float2 p;\n"
            "    p.x = i < n ? x[i] : 0.0f;\n"
            "    p.y = i < n ? -2.0f * x[i] : 0.0f;\n"
            "    p = R2(st).Sum(p);\n"
            "    if (threadIdx.x == 0) { y[2 * blockIdx.x] = p.x; y[2 * blockIdx.x + 1] = p.y; }\n"
            "}\n"
        ),
    ),
    "functors_of_the_program": (
        128,
        2,
        "float",
        (
            "#include <cub/cub.cuh>\n"
            "struct Bigger {\n"
            "    template <typename T, typename U>\n"
            "    __device__ T operator()(T&& a, U&& b) const { return (a > b) ? a : b; }\n"
            "};\n"
            "struct Plus { __device__ float operator()(float p, float q) const { return p + q; } };\n"
            "__global__ void k(const float* x, float* y, int n) {\n"
            "    using BR = cub::BlockReduce<float, 128>;\n"
            "    __shared__ typename BR::TempStorage st;\n"
            "    int i = blockIdx.x * 128 + threadIdx.x;\n"
            "    float top = BR(st).Reduce(i < n ? x[i] : -1e30f, Bigger());\n"
            "    __syncthreads();\n"
            "    float sum = BR(st).Reduce(i < n ? x[i] : 0.0f, Plus{});\n"
            "    if (threadIdx.x == 0) { y[2 * blockIdx.x] = top; y[2 * blockIdx.x + 1] = sum; }\n"
            "}\n"
        ),
    ),
    "warp_sums": (
        128,
        4,
        "float",
        (
            "#include <cub/cub.cuh>\n"
            "__global__ void k(const float* x, float* y, int n) {\n"
            "    typedef cub::WarpReduce<float> WR;\n"
            "    __shared__ typename WR::TempStorage ws[4];\n"
            "    int i = blockIdx.x * 128 + threadIdx.x;\n"
            "    int warp = threadIdx.x / 32;\n"
            "    float s = WR(ws[warp]).Sum(i < n ? x[i] : 0.0f);\n"
            "    if (threadIdx.x % 32 == 0) y[blockIdx.x * 4 + warp] = s;\n"
            "}\n"
        ),
    ),
}


def _port(name: str, target: str, tmp: Path):
    block, per, ty, src = KERNELS[name]
    dt = "float32" if ty == "float" else "int32"
    rng = [-1000, 1000] if ty == "int" else None
    params = {
        "x": tensor_param(["n"], "in", dt, rng),
        "y": tensor_param([f"ceil_div(n, {block}) * {per}"], "out", dt),
        "n": 700,
    }
    bdict = grid_binding([f"ceil_div(n, {block})"], params, [{"n": 700}, {"n": 300}], block)
    cu = tmp / f"{name}.cu"
    cu.write_text(src)
    return run_literal_exactly(cu, bdict, target, tmp)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_cub_reductions_match_exactly(name, target, tmp_path) -> None:
    run, points = _port(name, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def test_a_cub_scan_is_refused_by_name(tmp_path) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file

    cu = tmp_path / "scan.cu"
    cu.write_text(
        "#include <cub/cub.cuh>\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    typedef cub::BlockScan<float, 128> S;\n"
        "    __shared__ typename S::TempStorage t;\n"
        "    int i = blockIdx.x * 128 + threadIdx.x;\n"
        "    float out;\n"
        "    S(t).InclusiveSum(i < n ? x[i] : 0.0f, out);\n"
        "    if (i < n) y[i] = out;\n"
        "}\n"
    )
    params = {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 300}
    bdict = grid_binding(["ceil_div(n, 128)"], params, [{"n": 300}], 128)
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target="nki", lowering="literal")
    assert res.source is None
    why = [d.message for d in res.diagnostics if d.code == "C2N2301"]
    assert why and "__c2n_cub_block_inclusive_add" in why[0], why
    assert "only block and warp reductions" in why[0], why
