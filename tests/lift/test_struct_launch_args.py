"""A struct passed to a kernel by value is one launch argument and one kernel parameter per
member: host values, allocations and roles reach each member's parameter, and the arguments
after the struct keep their own values."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: members set in the launching function, the pointer member allocated there
LOCAL_STRUCT = """
typedef struct { int rows; int cols; float* data; } Plane;
__global__ void scale_plane(Plane g, float s) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < g.rows && c < g.cols) g.data[r * g.cols + c] *= s;
}
int main() {
    Plane g;
    g.rows = 100;
    g.cols = 70;
    cudaMalloc(&g.data, g.rows * g.cols * sizeof(float));
    dim3 b(16, 16);
    dim3 n((g.cols + 15) / 16, (g.rows + 15) / 16);
    scale_plane<<<n, b>>>(g, 2.5f);
}
"""

#: a struct behind a pointer, filled and allocated by an init function, passed as `*st`
POINTER_FILLED = """
struct Stats { int count; unsigned char* seen; float* weight; };
void init_stats(Stats* st, int n) {
    st->count = n;
    cudaMalloc((void**)&(st->seen), n * sizeof(unsigned char));
    cudaMalloc((void**)&st->weight, sizeof(float) * n);
}
__global__ void mark(Stats st, const int* ids, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        int k = ids[i];
        st.seen[k] = 1;
        st.weight[k] = 0.5f;
    }
}
void run(Stats* st, const int* ids, int m) {
    mark<<<(m + 127) / 128, 128>>>(*st, ids, m);
}
int main() {
    Stats st;
    int* ids;
    init_stats(&st, 4000);
    cudaMalloc(&ids, 512 * sizeof(int));
    run(&st, ids, 512);
}
"""


def test_members_take_the_host_values_and_allocations() -> None:
    partial, diags = infer_binding(parse_source(LOCAL_STRUCT, "k.cu"), "scale_plane")
    p = partial["params"]
    assert p["g__rows"] == {"value": 100} or p["g__rows"] == 100, p
    assert p["g__cols"] == {"value": 70} or p["g__cols"] == 70, p
    assert p["g__data"]["shape"] == ["g__rows", "g__cols"] and p["g__data"]["role"] == "inout"
    # the scalar after the struct keeps its own value (not a member's)
    assert p["s"] in (2.5, {"value": 2.5}), p["s"]
    assert partial["launch"]["grid"] == ["ceil_div(g__cols, 16)", "ceil_div(g__rows, 16)"]
    bnd, diags = binding_from_inference(parse_source(LOCAL_STRUCT, "k.cu"), "scale_plane")
    assert bnd is not None, [d.message for d in diags]


def test_members_of_a_struct_behind_a_pointer_take_its_allocations() -> None:
    partial, diags = infer_binding(parse_source(POINTER_FILLED, "k.cu"), "mark")
    p = partial["params"]
    assert p["st__seen"]["shape"] in (["st__count"], [4000]), p["st__seen"]
    assert p["st__weight"]["shape"] in (["st__count"], [4000]), p["st__weight"]
    assert p["st__seen"]["role"] == "out" and p["st__weight"]["role"] == "out"
    assert p["ids"]["shape"] == ["m"]
    bnd, diags = binding_from_inference(parse_source(POINTER_FILLED, "k.cu"), "mark")
    assert bnd is not None, [d.message for d in diags]


#: the programming guide's style: helpers read and write elements of a by-value matrix, a
#: helper returns a sub-matrix whose pointer points into the one it was given
HELPERS = """
#define TILE 16
typedef struct { int w; int h; int pitch; float* cells; } Mat;
__device__ float at(const Mat m, int r, int c) { return m.cells[r * m.pitch + c]; }
__device__ void put(Mat m, int r, int c, float v) { m.cells[r * m.pitch + c] = v; }
__device__ Mat tile_of(Mat m, int r, int c) {
    Mat t;
    t.w = TILE; t.h = TILE; t.pitch = m.pitch;
    t.cells = &m.cells[m.pitch * TILE * r + TILE * c];
    return t;
}
__global__ void copy_tiles(Mat src, Mat dst) {
    Mat s = tile_of(src, blockIdx.y, blockIdx.x);
    Mat d = tile_of(dst, blockIdx.y, blockIdx.x);
    put(d, threadIdx.y, threadIdx.x, 2.0f * at(s, threadIdx.y, threadIdx.x));
}
int main() {
    Mat a, b;
    a.w = a.pitch = 64; a.h = 32;
    b.w = b.pitch = 64; b.h = 32;
    cudaMalloc(&a.cells, a.w * a.h * sizeof(float));
    cudaMalloc(&b.cells, b.w * b.h * sizeof(float));
    dim3 blk(TILE, TILE);
    dim3 grd(a.w / TILE, a.h / TILE);
    copy_tiles<<<grd, blk>>>(a, b);
}
"""


def test_helpers_decide_the_roles_of_member_pointers() -> None:
    partial, diags = infer_binding(parse_source(HELPERS, "k.cu"), "copy_tiles")
    p = partial["params"]
    assert p["src__cells"]["role"] == "in", p["src__cells"]
    assert p["dst__cells"]["role"] == "out", p["dst__cells"]
    assert p["src__cells"]["shape"] == [2048] and p["dst__cells"]["shape"] == [2048]


@pytest.mark.parametrize(
    "helper", ["intCeilDiv", "DIV_ROUND_UP", "divUp", "ceil_div_int", "divideCeil"]
)
def test_a_rounding_up_helper_defined_elsewhere_sizes_the_grid(helper: str) -> None:
    src = f"""
__global__ void bump(float* v, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1.0f;
}}
void go(float* v, int n) {{ bump<<<{helper}(n, 256), 256>>>(v, n); }}
"""
    partial, diags = infer_binding(parse_source(src, "k.cu"), "bump")
    assert partial["launch"]["grid"] == ["ceil_div(n, 256)"], partial["launch"]
