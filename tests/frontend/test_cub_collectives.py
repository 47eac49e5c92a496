"""CUB block and warp collectives (see cuda2nki.frontend.cubblock and cuda2nki.simt.cubblock):
``BlockReduce``/``WarpReduce`` sums and reductions, ``BlockScan`` inclusive/exclusive scans, in
several spellings, with results only where CUB defines them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

HEAD = "#include <cub/cub.cuh>\n"


def _tu(tmp_path: Path, src: str):
    path = tmp_path / "k.cu"
    path.write_text(HEAD + src)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    return tu


def _run(tu, name: str, grid, block, **args):
    names = [k.name for k in tu.kernels if k.name.split("<")[0] == name]
    return run_kernel(tu, names[0], grid=grid, block=block, args=args)


# ---------------------------------------------------------------------- BlockReduce

SUMS = {
    "typedef-typename": """
template <int BLOCK>
__global__ void k(const float* x, float* out, int n) {
    typedef cub::BlockReduce<float, BLOCK> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float total = BlockReduce(temp).Sum(v);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
template __global__ void k<{B}>(const float*, float*, int);
""",
    "using-plus-functor": """
__global__ void k(const float* x, float* out, int n) {
    using BR = cub::BlockReduce<float, {B}, cub::BLOCK_REDUCE_RAKING>;
    __shared__ BR::TempStorage storage;
    const int gid = threadIdx.x + blockIdx.x * blockDim.x;
    float acc = 0.0f;
    if (gid < n) acc = x[gid];
    acc = BR(storage).Reduce(acc, cuda::std::plus<float>());
    if (!threadIdx.x) out[blockIdx.x] = acc;
}
""",
    "spelled-out-file-alias": """
typedef cub::BlockReduce<float, {B}> Reducer;
__global__ void k(const float* x, float* out, int n) {
    __shared__ typename cub::BlockReduce<float, {B}>::TempStorage t;
    int tid = threadIdx.x;
    float v = 0.0f;
    for (int i = blockIdx.x * {B} + tid; i < n; i += gridDim.x * {B}) v += x[i];
    float s = Reducer(t).Sum(v);
    if (tid == 0) { out[blockIdx.x] = s; }
}
""",
}


@pytest.mark.parametrize("block", [128, 96, 32])
@pytest.mark.parametrize("spelling", sorted(SUMS))
def test_block_sum_in_thread_zero(tmp_path: Path, spelling: str, block: int) -> None:
    tu = _tu(tmp_path, SUMS[spelling].replace("{B}", str(block)))
    n = 3 * block - 5
    x = np.random.default_rng(1).integers(-40, 40, n).astype(np.float32)
    got = _run(tu, "k", (3,), (block,), x=x, out=np.zeros(3, np.float32), n=n)["out"]
    want = [x[b * block : (b + 1) * block].sum() for b in range(3)]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "op, fn",
    [("cub::Max()", np.max), ("cub::Min{}", np.min), ("cuda::maximum<>()", np.max)],
)
def test_block_reduce_with_an_operation_and_valid_items(tmp_path: Path, op: str, fn) -> None:
    tu = _tu(
        tmp_path,
        f"""
__global__ void k(const int* x, int* out, int n) {{
    typedef cub::BlockReduce<int, 64> BR;
    __shared__ typename BR::TempStorage tmp;
    int base = blockIdx.x * 64;
    int v = base + threadIdx.x < n ? x[base + threadIdx.x] : 0;
    int r = BR(tmp).Reduce(v, {op}, n - base);
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}}
""",
    )
    n = 150
    x = np.random.default_rng(2).integers(-1000, 1000, n).astype(np.int32)
    got = _run(tu, "k", (3,), (64,), x=x, out=np.zeros(3, np.int32), n=n)["out"]
    np.testing.assert_array_equal(got, [fn(x[b * 64 : (b + 1) * 64]) for b in range(3)])


@pytest.mark.parametrize("block", [64, 128])
def test_each_block_counts_its_own_valid_items(tmp_path: Path, block: int) -> None:
    """The count differs between blocks (the last one is partial): each block's own count
    decides which threads contribute, not the largest of the launch."""
    tu = _tu(
        tmp_path,
        f"""
__global__ void k(const float* x, float* out, int n) {{
    using R = cub::BlockReduce<float, {block}>;
    __shared__ R::TempStorage st;
    int base = blockIdx.x * {block};
    float v = base + threadIdx.x < n ? x[base + threadIdx.x] : -1.0f;
    float s = R(st).Sum(v, n - base);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}}
""",
    )
    n = 2 * block + 7
    x = np.random.default_rng(3).integers(-40, 40, n).astype(np.float32)
    got = _run(tu, "k", (3,), (block,), x=x, out=np.zeros(3, np.float32), n=n)["out"]
    np.testing.assert_array_equal(got, [x[b * block : (b + 1) * block].sum() for b in range(3)])


def test_block_reduce_defined_only_in_thread_zero(tmp_path: Path) -> None:
    tu = _tu(
        tmp_path,
        """
__global__ void k(const float* x, float* out) {
    typedef cub::BlockReduce<float, 64> BR;
    __shared__ typename BR::TempStorage tmp;
    out[threadIdx.x] = BR(tmp).Sum(x[threadIdx.x]);
}
""",
    )
    x = np.arange(64, dtype=np.float32)
    got = _run(tu, "k", (1,), (64,), x=x, out=np.zeros(64, np.float32))["out"]
    assert got[0] == x.sum()
    assert np.isnan(got[1:]).all()


def test_two_dimensional_block(tmp_path: Path) -> None:
    tu = _tu(
        tmp_path,
        """
__global__ void k(const float* x, float* out) {
    typedef cub::BlockReduce<float, 16, cub::BLOCK_REDUCE_WARP_REDUCTIONS, 4> BR;
    __shared__ typename BR::TempStorage tmp;
    float s = BR(tmp).Sum(x[threadIdx.y * 16 + threadIdx.x]);
    if (threadIdx.x == 0 && threadIdx.y == 0) out[0] = s;
}
""",
    )
    x = np.arange(64, dtype=np.float32)
    got = _run(tu, "k", (1,), (16, 4), x=x, out=np.zeros(1, np.float32))["out"]
    assert got[0] == x.sum()


def test_vector_sum_with_the_programs_operator(tmp_path: Path) -> None:
    tu = _tu(
        tmp_path,
        """
__host__ __device__ inline double3 operator+(const double3& a, const double3& b) {
    return make_double3(a.x + b.x, a.y + b.y, a.z + b.z);
}
template <int N>
__global__ void k(const double* x, double* out) {
    typedef cub::BlockReduce<double3, N> BlockReduce;
    __shared__ typename BlockReduce::TempStorage smem;
    double v = x[threadIdx.x];
    double3 sums = BlockReduce(smem).Sum(make_double3(v, v * v, 1.0));
    if (threadIdx.x == 0) { out[0] = sums.x; out[1] = sums.y; out[2] = sums.z; }
}
template __global__ void k<64>(const double*, double*);
""",
    )
    x = np.linspace(-1, 1, 64)
    got = _run(tu, "k", (1,), (64,), x=x, out=np.zeros(3))["out"]
    np.testing.assert_allclose(got, [x.sum(), (x * x).sum(), 64.0])


# ---------------------------------------------------------------------- WarpReduce


@pytest.mark.parametrize("lanes", [32, 16, 8])
def test_warp_reduce_in_lane_zero_of_each_logical_warp(tmp_path: Path, lanes: int) -> None:
    ctor = "cub::WarpReduce<float>" if lanes == 32 else f"cub::WarpReduce<float, {lanes}>"
    tu = _tu(
        tmp_path,
        f"""
__global__ void k(const float* x, float* out) {{
    using WR = {ctor};
    __shared__ typename WR::TempStorage temp[128 / {lanes}];
    int w = threadIdx.x / {lanes};
    float s = WR(temp[w]).Sum(x[threadIdx.x]);
    float m = WR(temp[w]).Reduce(x[threadIdx.x], cub::Max(), {lanes} - 1);
    if (threadIdx.x % {lanes} == 0) {{ out[2 * w] = s; out[2 * w + 1] = m; }}
}}
""",
    )
    x = np.random.default_rng(3).integers(-50, 50, 128).astype(np.float32)
    got = _run(tu, "k", (1,), (128,), x=x, out=np.zeros(256 // lanes, np.float32))["out"]
    groups = x.reshape(-1, lanes)
    want = np.stack([groups.sum(1), groups[:, :-1].max(1)], 1).reshape(-1)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------- BlockScan

SCAN_HEAD = """
__global__ void k(const int* x, int* out, int* agg) {
    typedef cub::BlockScan<int, 64> BlockScan;
    typedef cub::BlockReduce<int, 64> BlockReduce;
    union TempStorage {
        typename BlockScan::TempStorage scan;
        typename BlockReduce::TempStorage reduce;
    };
    __shared__ TempStorage smem;
    int v = x[blockIdx.x * 64 + threadIdx.x];
    int r = 0, total = 0;
"""


@pytest.mark.parametrize(
    "call, want",
    [
        ("BlockScan(smem.scan).InclusiveSum(v, r);", lambda x: np.cumsum(x)),
        ("BlockScan(smem.scan).ExclusiveSum(v, r, total);", lambda x: np.cumsum(x) - x),
        (
            "BlockScan(smem.scan).ExclusiveScan(v, r, 5, cub::Max(), total);",
            lambda x: np.maximum.accumulate(np.r_[5, x[:-1]]),
        ),
        (
            "BlockScan(smem.scan).InclusiveScan(v, r, cub::Min(), total);",
            lambda x: np.minimum.accumulate(x),
        ),
    ],
)
def test_block_scans(tmp_path: Path, call: str, want) -> None:
    tu = _tu(
        tmp_path,
        SCAN_HEAD
        + f"""    {call}
    out[blockIdx.x * 64 + threadIdx.x] = r;
    agg[blockIdx.x * 64 + threadIdx.x] = total;
}}
""",
    )
    x = np.random.default_rng(4).integers(-9, 9, 128).astype(np.int32)
    got = _run(tu, "k", (2,), (64,), x=x, out=np.zeros(128, np.int32), agg=np.zeros(128, np.int32))
    for b in range(2):
        seg = x[b * 64 : (b + 1) * 64]
        np.testing.assert_array_equal(got["out"][b * 64 : (b + 1) * 64], want(seg))
        if "total" in call:
            red = np.max(seg) if "Max" in call else np.min(seg) if "Min" in call else seg.sum()
            assert (got["agg"][b * 64 : (b + 1) * 64] == red).all()


def test_exclusive_scan_without_initial_value_leaves_thread_zero_undefined(tmp_path: Path) -> None:
    tu = _tu(
        tmp_path,
        """
__global__ void k(const float* x, float* out) {
    __shared__ union { typename cub::BlockScan<float, 32>::TempStorage s; } tmp;
    float r;
    cub::BlockScan<float, 32>(tmp.s).ExclusiveScan(x[threadIdx.x], r, cub::Sum());
    out[threadIdx.x] = r;
}
""",
    )
    x = np.arange(1, 33, dtype=np.float32)
    got = _run(tu, "k", (1,), (32,), x=x, out=np.zeros(32, np.float32))["out"]
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], np.cumsum(x)[:-1])


# ---------------------------------------------------------------------- refusals and faults


@pytest.mark.parametrize(
    "call, what",
    [
        ("BR(tmp).Reduce(v, [](float a, float b) { return a + b; })", "with the operation"),
        ("BR(tmp).Reduce(v, mymax)", "with the operation 'mymax'"),
        ("BR(tmp).Sum(items)", "array of items"),
        ("BR(v).Sum(v)", "other than on its TempStorage"),
    ],
)
def test_refused_forms_say_where_and_what(tmp_path: Path, call: str, what: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        HEAD
        + f"""__device__ float mymax(float a, float b) {{ return a > b ? a : b; }}
__global__ void k(const float* x, float* out) {{
    typedef cub::BlockReduce<float, 64> BR;
    __shared__ typename BR::TempStorage tmp;
    float v = x[threadIdx.x];
    float items[4] = {{v, v, v, v}};
    float r = {call};
    out[0] = r;
}}
"""
    )
    tu = parse_file(path)
    (d,) = [d for d in tu.rejected["k"] if d.code == "C2N1010"]
    assert what in d.message
    assert d.loc.line == 8 and d.loc.col > 1


def test_block_size_other_than_the_types_is_refused(tmp_path: Path) -> None:
    tu = _tu(
        tmp_path,
        """
__global__ void k(const float* x, float* out) {
    typedef cub::BlockReduce<float, 128> BR;
    __shared__ typename BR::TempStorage tmp;
    float s = BR(tmp).Sum(x[threadIdx.x]);
    if (threadIdx.x == 0) out[0] = s;
}
""",
    )
    with pytest.raises(DiagnosticError) as e:
        _run(tu, "k", (1,), (64,), x=np.zeros(64, np.float32), out=np.zeros(1, np.float32))
    assert e.value.diagnostics[0].code == "C2N1507"


GENERIC = """
template <typename T, int BLOCK>
__global__ void k(const T* x, T* out, int n) {
    typedef cub::BlockReduce<T, BLOCK> BR;
    typedef cub::BlockScan<T, BLOCK> BS;
    __shared__ union { typename BR::TempStorage r; typename BS::TempStorage s; } tmp;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    T v = i < n ? x[i] : T(0);
    T s = BR(tmp.r).Reduce(v, cub::Max());
    __syncthreads();
    T p;
    BS(tmp.s).InclusiveSum(v, p);
    if (i < n) out[i] = p;
    if (threadIdx.x == 0) out[n + blockIdx.x] = s;
}
"""


def test_template_over_the_item_type_lowers_before_and_after_instantiation(
    tmp_path: Path,
) -> None:
    generic = _tu(tmp_path, GENERIC)
    assert [f.name for f in generic.kernels] == ["k"]
    tu = _tu(tmp_path, GENERIC + "template __global__ void k<int, 64>(const int*, int*, int);\n")
    x = np.random.default_rng(5).integers(0, 50, 128).astype(np.int32)
    got = _run(tu, "k", (2,), (64,), x=x, out=np.zeros(130, np.int32), n=128)["out"]
    blocks = x.reshape(2, 64)
    np.testing.assert_array_equal(got[:128], np.cumsum(blocks, 1).reshape(-1))
    np.testing.assert_array_equal(got[128:], blocks.max(1))
