"""Index data staged through shared memory (:mod:`cuda2nki.lift.sharedindex`): a block copies
values of an integer input into a shared array and indexes another array by the values it reads
back.  The array read so is sized as if indexed by the input directly (an extent from the
values the binding chooses, or the input's range from the array's allocation); a shared array
that also holds other values leaves the array unsized."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.dataindex import DATA_VALUES
from cuda2nki.lift.infer import binding_from_inference, infer_binding

V = DATA_VALUES

#: kernel source -> (the array read at the staged values, the input staged)
BY_DATA = {
    "guarded-copy-then-gather": (
        """
#define TB 128
__global__ void k(const int* idx, const float* src, float* out, int n) {
    __shared__ int s_idx[TB];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) s_idx[threadIdx.x] = idx[g];
    __syncthreads();
    if (g < n) out[g] = src[s_idx[threadIdx.x]] * 2.0f;
}
void go(const int* i, const float* s, float* o, int n) { k<<<(n + TB - 1) / TB, TB>>>(i, s, o, n); }
""",
        "src",
        "idx",
    ),
    "neighbour-list-per-block-read-through-a-local": (
        """
__global__ void k(const float* val, const unsigned int* nbr, float* acc, int nodes, int deg) {
    __shared__ unsigned int list[64];
    int v = blockIdx.x;
    for (int t = threadIdx.x; t < deg; t += blockDim.x) list[t] = nbr[v * deg + t];
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int e = 0; e < deg; ++e) { unsigned int u = list[e]; s += val[u]; }
        acc[v] = s;
    }
}
void go(const float* x, const unsigned int* nb, float* a, int n, int d) {
    k<<<n, 64>>>(x, nb, a, n, d);
}
""",
        "val",
        "nbr",
    ),
    "two-dimensional-tile-staged-through-a-carrier-local": (
        """
__global__ void k(const long* cols, const float* table, float* out, int rows) {
    __shared__ long pick[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    if (r < rows) {
        long c = cols[r * 32 + threadIdx.x];
        pick[threadIdx.y][threadIdx.x] = c;
    }
    __syncthreads();
    if (r < rows) out[r * 32 + threadIdx.x] = table[pick[threadIdx.y][31 - threadIdx.x]];
}
void go(const long* c, const float* t, float* o, int rows) {
    dim3 block(32, 4);
    k<<<(rows + 3) / 4, block>>>(c, t, o, rows);
}
""",
        "table",
        "cols",
    ),
    "cast-copy-into-a-dynamic-array": (
        """
__global__ void k(const short* perm, const float* x, float* y, int n) {
    extern __shared__ int slot[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) slot[threadIdx.x] = (int)perm[i];
    __syncthreads();
    int j = blockDim.x - 1 - threadIdx.x;
    if (i < n) y[i] = x[slot[j]];
}
void go(const short* p, const float* x, float* y, int n) {
    k<<<n / 256, 256, 256 * sizeof(int)>>>(p, x, y, n);
}
""",
        "x",
        "perm",
    ),
}


@pytest.mark.parametrize("spelling", sorted(BY_DATA))
def test_an_array_read_at_staged_values_gets_the_extent_they_reach(spelling: str) -> None:
    src, target, data = BY_DATA[spelling]
    tu = parse_source(src, "s.cu")
    bnd, diags = binding_from_inference(tu, "k")
    assert bnd is not None, [d.message for d in diags]
    params = infer_binding(tu, "k")[0]["params"]
    assert params[target]["shape"] == [V], params[target]
    assert params[data]["range"] == [0, V], params[data]


def test_the_staged_input_takes_the_range_of_an_allocated_array() -> None:
    """``x`` sized by its allocation: the values staged in ``perm`` pick one of its rows."""
    src = """
__global__ void k(const float* x, const unsigned* order, float* y, int rows, int m) {
    extern __shared__ unsigned perm[];
    for (int t = threadIdx.x; t < rows; t += blockDim.x) perm[t] = order[t];
    __syncthreads();
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= m) return;
    for (int r = 0; r < rows; ++r) y[r * m + col] = x[perm[r] * m + col];
}
int main() {
    int rows = 32, m = 1000;
    float *x, *y; unsigned* o;
    cudaMalloc(&x, rows * m * sizeof(float));
    cudaMalloc(&y, rows * m * sizeof(float));
    cudaMalloc(&o, rows * sizeof(unsigned));
    k<<<(m + 255) / 256, 256, rows * sizeof(unsigned)>>>(x, o, y, rows, m);
    return 0;
}
"""
    params = infer_binding(parse_source(src, "s.cu"), "k")[0]["params"]
    lo, hi = params["order"]["range"]
    assert lo == 0 and eval_c_expr(str(hi), {"rows": 9, "m": 5}) == 9, params["order"]


#: a shared array that holds other values than the input's: the array read through it stays
#: unsized
MIXED = {
    "a-default-for-the-tail": """
    if (g < n) s[threadIdx.x] = idx[g]; else s[threadIdx.x] = -1;""",
    "two-inputs-in-one-array": """
    s[threadIdx.x] = g < n ? idx[g] : 0;
    if (threadIdx.x == 0) s[0] = other[blockIdx.x];""",
    "accumulated": """
    if (g < n) { s[threadIdx.x] = idx[g]; s[threadIdx.x] += 1; }""",
    "atomic-into-the-array": """
    if (g < n) { s[threadIdx.x] = idx[g]; atomicAdd(&s[threadIdx.x], 1); }""",
    "pointer-to-the-array": """
    int* p = s;
    if (g < n) { s[threadIdx.x] = idx[g]; p[threadIdx.x] = 3; }""",
}


@pytest.mark.parametrize("spelling", sorted(MIXED))
def test_a_shared_array_holding_other_values_sizes_nothing(spelling: str) -> None:
    src = f"""
__global__ void k(const int* idx, const int* other, const float* src, float* out, int n) {{
    __shared__ int s[128];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    {MIXED[spelling]}
    __syncthreads();
    if (g < n) out[g] = src[s[threadIdx.x]];
}}
void go(const int* i, const int* o, const float* s, float* d, int n) {{
    k<<<(n + 127) / 128, 128>>>(i, o, s, d, n);
}}
"""
    params = infer_binding(parse_source(src, "m.cu"), "k")[0]["params"]
    assert "shape" not in params["src"], params["src"]
