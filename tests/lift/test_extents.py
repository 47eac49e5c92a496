"""Pointer shapes and roles from index expressions (cuda2nki.lift.extents), for kernels symbolic
execution does not analyse: row pointers, block-per-row loops, flat indices split by / and %,
grid-stride loops, early returns, vector casts, load/store intrinsics, dynamic shared memory."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: block per row, a row pointer and a block-strided loop reduced through dynamic shared memory
ROW_MEAN = """
__global__ void row_mean(float* mean, const float* inp, int N, int C, int block_size) {
    extern __shared__ float buf[];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    const float* x = inp + row * C;
    float sum = 0.0f;
    for (int i = tid; i < C; i += block_size) sum += x[i];
    buf[tid] = sum;
    __syncthreads();
    for (int s = block_size / 2; s >= 1; s /= 2) {
        __syncthreads();
        if (tid < s) buf[tid] += buf[tid + s];
    }
    if (tid == 0) mean[row] = buf[0] / C;
}
void launch_mean(float* mean, const float* inp, int N, int C, int block_size) {
    row_mean<<<N, block_size, block_size * sizeof(float)>>>(mean, inp, N, C, block_size);
}
int main() {
    float *m, *x;
    int sizes[] = {64, 128};
    for (int j = 0; j < 2; j++) launch_mean(m, x, 256, 96, sizes[j]);
}
"""


def test_row_pointer_and_dynamic_shared_memory() -> None:
    tu = parse_source(ROW_MEAN, "m.cu")
    partial, diags = infer_binding(tu, "row_mean")
    p = partial["params"]
    assert p["inp"]["shape"] == ["N", "C"] and p["inp"]["role"] == "in"
    assert p["mean"]["shape"] == ["N"] and p["mean"]["role"] == "out"
    assert partial["launch"]["shared_bytes"] == "block_size * 4"
    assert not [d for d in diags if d.code == "C2N2101"], diags
    bnd, _ = binding_from_inference(tu, "row_mean")
    assert bnd is not None


#: three spellings of a (B, T, C) tensor indexed by its strides
BTC = {
    "outer-first": """
__global__ void k(float* out, const float* inp, int B, int T, int C) {
    int b = blockIdx.y; int t = blockIdx.x; int c = threadIdx.x;
    if (b < B && t < T && c < C) out[b * T * C + t * C + c] = inp[b * T * C + t * C + c] * 2.0f;
}""",
    "inner-first-early-return": """
__global__ void k(float* out, const float* inp, int B, int T, int C) {
    int bb = blockIdx.z, tt = blockIdx.y * blockDim.y + threadIdx.y;
    int cc = blockIdx.x * blockDim.x + threadIdx.x;
    if (cc >= C || tt >= T) return;
    if (bb >= B) { return; }
    out[cc + C * tt + C * T * bb] = inp[cc + C * (tt + T * bb)] + 1.0f;
}""",
    "row-pointer": """
__global__ void k(float* out, const float* inp, int B, int T, int C) {
    int bt = blockIdx.x;
    if (bt >= B * T) return;
    const float* x = inp + bt * C;
    float* o = out + bt * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) o[c] = x[c] * x[c];
}""",
}


@pytest.mark.parametrize("name", sorted(BTC))
def test_btc_strides(name: str) -> None:
    tu = parse_source(BTC[name], "k.cu")
    fn = tu.function("k")
    launch = {"grid": ["T", "B"] if name == "outer-first" else ["ceil_div(C, 32)", "T", "B"]}
    launch["block"] = [32, 1, 1] if name != "row-pointer" else [64]
    if name == "row-pointer":
        launch["grid"] = ["B * T"]
    got = extents(fn, launch)
    want = ("B*T", "C") if name == "row-pointer" else ("B", "T", "C")
    if name == "row-pointer":  # the row index is one flat atom bounded by B * T
        assert got["inp"].shape in (("B*T", "C"), ("T*B", "C"))
    else:
        assert got["inp"].shape == want, got
    assert got["out"].role == "out" and got["inp"].role == "in"
    assert got["inp"].note is None


FLAT = """
__global__ void norm(float* out, const float* inp, const float* mean, const float* w,
                     int B, int T, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int bt = idx / C;
    int c = idx % C;
    out[idx] = (inp[idx] - mean[bt]) * w[c];
}
"""


@pytest.mark.parametrize("block", [128, 256])
def test_flat_index_split_by_div_and_mod_is_bounded_by_the_launch_with_a_note(block: int) -> None:
    fn = parse_source(FLAT, "f.cu").function("norm")
    got = extents(fn, {"grid": [f"ceil_div(B * T * C, {block})"], "block": [block]})
    assert got["w"].shape == ("C",) and got["w"].note is None
    flat = got["inp"].shape
    assert len(flat) == 1 and sorted(str(flat[0]).split("*")) == ["B", "C", "T"]
    assert sorted(str(got["mean"].shape[0]).split("*")) == ["B", "T"]
    assert "launch geometry" in (got["out"].note or "")


GRID_STRIDE = {
    "for-decl": """
__global__ void gs(float* y, const float* x, int n) {
    __shared__ float tmp[32];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        tmp[threadIdx.x % 32] = x[i];
        y[i] = tmp[threadIdx.x % 32] * 3.0f;
    }
}""",
    "stride-local": """
__global__ void gs(float* y, const float* x, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = threadIdx.x + blockDim.x * blockIdx.x; n > i; i += stride) {
        __stcs(y + i, __ldcs(&x[i]) + 1.0f);
    }
}""",
}


@pytest.mark.parametrize("name", sorted(GRID_STRIDE))
def test_grid_stride_loops(name: str) -> None:
    fn = parse_source(GRID_STRIDE[name], "g.cu").function("gs")
    got = extents(fn, {"grid": [16], "block": [128]})
    assert got["x"].shape == ("n",) and got["x"].role == "in"
    assert got["y"].shape == ("n",) and got["y"].role == "out"


def test_vector_casts_count_elements_of_the_pointee() -> None:
    src = """
__global__ void v4(float* out, const float* in, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = reinterpret_cast<const float4*>(in)[i];
        reinterpret_cast<float4*>(out)[i] = a;
    }
}"""
    fn = parse_source(src, "v.cu").function("v4")
    got = extents(fn, {"grid": ["ceil_div(n4, 64)"], "block": [64]})
    assert got["in"].shape == ("n4", 4) and got["out"].shape == ("n4", 4)


def test_read_modify_write_and_atomics_are_inout() -> None:
    src = """
__global__ void acc(float* hist, float* out, const int* keys, int n, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] += 1.0f;
        atomicAdd(&hist[i % bins], 1.0f);
    }
}"""
    fn = parse_source(src, "a.cu").function("acc")
    got = extents(fn, {"grid": ["ceil_div(n, 32)"], "block": [32]})
    assert got["out"].role == "inout" and got["out"].shape == ("n",)
    assert got["hist"].role == "inout" and got["hist"].shape == ("bins",)
    assert got["keys"].role is None and got["keys"].shape is None


def test_an_offset_through_index_data_assumes_its_values() -> None:
    src = """
__global__ void gather(float* out, const float* table, const int* idx, int n, int C) {
    int i = blockIdx.x;
    if (i < n) {
        int row = idx[i];
        for (int c = threadIdx.x; c < C; c += blockDim.x) out[i * C + c] = table[row * C + c];
    }
}"""
    fn = parse_source(src, "g.cu").function("gather")
    got = extents(fn, {"grid": ["n"], "block": [32]})
    assert got["out"].shape == ("n", "C") and got["idx"].shape == ("n",)
    # rows picked by index data: the values of idx are chosen, [0, 64), and bound the rows
    assert got["table"].shape == (64, "C") and got["table"].role == "in"
    assert [(r.tensor, r.lo, r.hi) for r in got["table"].ranges] == [("idx", 0, 64)]


@pytest.mark.parametrize(
    ("move", "shape"),
    [
        ("p += n;", ("C", "n")),  # a fixed step per iteration: row c of a [C, n] array
        ("if (s > 0.0f) p += n;", None),  # a step taken on some iterations only
        ("p += c * n;", None),  # a growing step
    ],
)
def test_a_pointer_moved_inside_a_loop(move: str, shape: tuple | None) -> None:
    src = f"""
__global__ void walk(float* out, const float* inp, int n, int C) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* p = inp;
    float s = 0.0f;
    for (int c = 0; c < C; c++) {{ s += p[i]; {move} }}
    out[i] = s;
}}"""
    fn = parse_source(src, "w.cu").function("walk")
    got = extents(fn, {"grid": ["ceil_div(n, 32)"], "block": [32]})
    assert got["out"].shape == ("n",)
    assert got["inp"].shape == shape and got["inp"].role == "in"


@pytest.mark.parametrize(
    "launch",
    [
        "k<<<dim3(ceil_div(n, bs), rows), bs>>>(y, x, n, rows);",
        "int nb = (n + bs - 1) / bs; dim3 g(nb, rows); dim3 b(bs); k<<<g, b>>>(y, x, n, rows);",
    ],
)
def test_a_launcher_nobody_calls_gets_a_default_block_size_with_a_note(launch: str) -> None:
    src = f"""
__global__ void k(float* y, const float* x, int n, int rows) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (i < n && r < rows) y[r * n + i] = x[r * n + i] * 2.0f;
}}
void launch_k(float* y, const float* x, int n, int rows, int bs) {{ {launch} }}
"""
    tu = parse_source(src, "u.cu")
    partial, diags = infer_binding(tu, "k")
    assert partial["launch"]["block"][0] == 128
    for n in (1, 128, 129, 1000):  # the grid follows the size check chooses
        assert eval_c_expr(str(partial["launch"]["grid"][0]), {"n": n}) == -(-n // 128)
    note = next(d for d in diags if d.code == "C2N2100" and "launch" in d.message)
    assert "no call in this file passes 'bs'" in note.message
    assert binding_from_inference(tu, "k")[0] is not None


TILED = """
__global__ void tiled(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[TILE * TILE];
    __shared__ float Bs[TILE * TILE];
    const int row = threadIdx.x / TILE, col = threadIdx.x % TILE;
    A += blockIdx.y * TILE * K;
    B += blockIdx.x * TILE;
    C += blockIdx.y * TILE * N + blockIdx.x * TILE;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[row * TILE + col] = A[row * K + col];
        Bs[row * TILE + col] = B[row * N + col];
        __syncthreads();
        A += TILE;
        B += TILE * N;
        for (int i = 0; i < TILE; ++i) acc += As[row * TILE + i] * Bs[i * TILE + col];
        __syncthreads();
    }
    C[row * N + col] = acc;
}
"""


@pytest.mark.parametrize("tile", [8, 32])
@pytest.mark.parametrize("grid", ["({n} + {t} - 1) / {t}", "ceil_div({n}, {t})"])
def test_pointers_advanced_per_tile_of_an_unguarded_tiled_kernel(tile: int, grid: str) -> None:
    fn = parse_source(TILED.replace("TILE", str(tile)), "t.cu").function("tiled")
    g = [grid.format(n="N", t=tile), grid.format(n="M", t=tile)]
    got = extents(fn, {"grid": g, "block": [tile * tile]})
    assert got["C"].shape == ("M", "N") and got["C"].role == "out"
    assert "launch geometry" in (got["C"].note or "")
    # B is read a tile row at a time down K: K rows of N, with K a multiple of the tile
    assert got["B"].shape == ("K", "N")
    assert got["A"].shape == ("M", "K") and got["A"].role == "in"
    assert got["A"].tiles == (("K", tile, "k0"),)
    assert f"K a multiple of {tile}" in (got["B"].note or "")


@pytest.mark.parametrize("unused", ["float* spare", "const double* __restrict__ spare"])
def test_a_pointer_the_kernel_never_uses_is_a_one_element_input(unused: str) -> None:
    src = f"""
__global__ void k(float* y, {unused}, const float* x, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}}
void run(float* y, float* s, const float* x) {{ k<<<(1000 + 127) / 128, 128>>>(y, s, x, 1000); }}
"""
    tu = parse_source(src.replace("double", "float"), "u.cu")
    partial, diags = infer_binding(tu, "k")
    assert partial["params"]["spare"]["shape"] == [1]
    assert partial["params"]["spare"]["role"] == "in"
    assert any("never uses it" in d.message for d in diags if d.code == "C2N2100")
    assert binding_from_inference(tu, "k")[0] is not None


STENCIL = """
#define W 64
__global__ void sweep(int n, float* A, float* X) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n) {
        for (int k = 0; k < n - 2; k++)
            X[r * W + (W - k - 2)] = X[r * W + (W - 2 - k)] * A[r * W + (W - k - 3)];
    }
}
__global__ void smooth(int n, float* A, float* B) {
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        B[i * W + j] = A[(i - 1) * W + j] + A[(i + 1) * W + j] + A[i * W + j - 1];
}
"""


@pytest.mark.parametrize("n", [5, 17, 40])
def test_inferred_shapes_cover_every_access(n: int) -> None:
    """Counting down (W - k - 2 is largest at k = 0) and reading the next row (i + 1 under
    i < n - 1): the inferred shape holds the farthest element the kernel touches."""
    from cuda2nki.binding import eval_c_expr

    tu = parse_source(STENCIL, "s.cu")
    far = {
        ("sweep", "X"): (n - 1) * 64 + 62,
        ("sweep", "A"): (n - 1) * 64 + 61,
        ("smooth", "A"): (n - 1) * 64 + n - 2,
    }
    for (kernel, name), top in far.items():
        shape = infer_binding(tu, kernel)[0]["params"][name]["shape"]
        size = 1
        for d in shape:
            size *= int(eval_c_expr(str(d), {"n": n}))
        assert size > top, (kernel, name, shape)


#: an unguarded 2-D kernel whose rows are ``ld`` apart (a leading dimension, not the width the
#: grid covers): every thread of the grid reads and writes
UNGUARDED = """
__global__ void copy_ld(const float* P, float* R, int rows, int cols, int ldp, int ldr) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    R[y * ldr + x] = 2.0f * P[y * ldp + x];
}
"""


@pytest.mark.parametrize(
    "grid",
    [
        ["cols / {b}", "rows / {b}"],  # rounded down: whole tiles of sizes that are multiples
        ["(cols + {b} - 1) / {b}", "(rows + {b} - 1) / {b}"],  # rounded up
        ["(cols + 1) / {b}", "rows / {b}"],  # a part of a block added
    ],
)
@pytest.mark.parametrize("b", [8, 16, 32])
def test_a_grid_of_whole_tiles_covers_the_size_it_divides(grid: list[str], b: int) -> None:
    fn = parse_source(UNGUARDED, "u.cu").function("copy_ld")
    got = extents(fn, {"grid": [g.format(b=b) for g in grid], "block": [b, b]})
    sizes = {"rows": 4 * b, "cols": 2 * b, "ldp": 3 * b, "ldr": 5 * b}
    for name, ld in (("P", "ldp"), ("R", "ldr")):
        shape = got[name].shape
        assert shape is not None, got
        n = eval_c_expr("*".join(f"({d})" for d in shape), sizes)
        assert n == (sizes["rows"] - 1) * sizes[ld] + sizes["cols"], (name, shape)
