"""Accessor structs: a struct (or class) holding a pointer, whose ``operator*`` / ``operator[]``
return a reference into the array it points to, read and written through; and the shared-memory
view struct whose ``operator*`` is the first element of the launch's dynamic shared memory
(``*view`` after a block tree: the tree's result).  The front end lowers ``*obj`` / ``obj[i]``
to calls of those member functions, the lifter follows the member pointer passed by address and
the shared array decayed to a pointer; each kernel lifts and its port matches the CUDA kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.api import lift
from cuda2nki.frontend import parse_source
from cuda2nki.ir.printer import to_text
from tests.port.acceptance import check_kernel

#: an accessor over a pointer; {kw} struct/class, {body} the kernel's use of it
ACCESSOR = """
{kw} {name} {{
{public}    {cq}float* at;
    __device__ {cq}float& operator*() {const} {{ return *at; }}
    __device__ {cq}float& operator[](int k) {const} {{ return at[k]; }}
}};
__global__ void axpy(const float* x, float* y, int n, float a) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
{body}
}}
void run(const float* x, float* y, int n, float a) {{
    axpy<<<(n + 127) / 128, 128>>>(x, y, n, a);
}}
"""

#: kernel bodies: (accessor over x (const) or y, body)
BODIES = {
    "store_through_star": (
        "",
        "    if (i < n) {\n        Ref c{y + i};\n        *c = a * x[i] + *c;\n    }",
    ),
    "store_through_index": ("", "    Ref r{y};\n    if (i < n) r[i] = a * x[i] + y[i];"),
    "load_through_star": (
        "const ",
        "    if (i >= n) return;\n    Ref src{x + i};\n    y[i] = a * *src + y[i];",
    ),
    "load_through_index": (
        "const ",
        "    Ref src{x};\n"
        "    for (int j = i; j < n; j += blockDim.x * gridDim.x) y[j] = a * src[j] + y[j];",
    ),
}


def _accessor(case: str, kw: str = "struct") -> str:
    cq, body = BODIES[case]
    return ACCESSOR.format(
        kw=kw,
        name="Ref",
        public="public:\n" if kw == "class" else "",
        cq=cq,
        const="const" if cq else "",
        body=body,
    )


@pytest.mark.parametrize("kw", ["struct", "class"])
@pytest.mark.parametrize("case", sorted(BODIES))
def test_accessor_operators_lift_to_the_map(case: str, kw: str) -> None:
    got = lift(parse_source(_accessor(case, kw), "a.cu"), "axpy")
    assert got.claimed and got.idiom == "map", [d.message for d in got.diagnostics]
    text = to_text(got.intent.body[0], locs=False)
    assert "y[i] = a * x[i] + y[i]" in text, text


#: an accessor whose member function moves its own pointer: a write to the object, refused
BUMPING = """
struct Cursor {
    float* at;
    __device__ float& operator*() { at = at + 1; return *at; }
};
__global__ void k(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Cursor c{y + i};
    if (i + 1 < n) *c = 1.0f;
}
void run(float* y, int n) { k<<<(n + 127) / 128, 128>>>(y, n); }
"""


def test_a_member_function_writing_its_object_is_refused() -> None:
    got = lift(parse_source(BUMPING, "b.cu"), "k")
    assert not got.claimed
    # refused where the member function assigns the member (line 4), with the lifter's id
    assert any("C2N2010" in d.message and d.loc.line == 4 for d in got.diagnostics), [
        (d.loc.line, d.message) for d in got.diagnostics
    ]


#: a row max by a block tree in the launch's dynamic shared memory, handed out by view structs: one
#: with getPointer(), one with operator* / operator[]; {read} how thread 0 reads the result
VIEW_TREE = """
template <typename T> struct Buf {
    __device__ T* getPointer() { extern __shared__ T buf_any[]; return buf_any; }
};
template <typename T> struct Head {
    __device__ T& operator*() { extern __shared__ T head_any[]; return *head_any; }
    __device__ T& operator[](int i) { extern __shared__ T head_any[]; return head_any[i]; }
};
template <typename T>
__global__ void row_peak(const T* m, T* peak, int h, int w) {
    Buf<T> b;
    T* s = b.getPointer();
    int c = blockIdx.x, r = threadIdx.x;
    T v = -1e30f;
    for (int q = r; q < w; q += blockDim.x) v = fmaxf(v, m[c * w + q]);
    s[r] = v;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (r < half) s[r] = fmaxf(s[r], s[r + half]);
        __syncthreads();
    }
    Head<T> top;
    {read}
}
void run(const float* m, float* peak, int h, int w) {
    row_peak<float><<<h, 128, 128 * sizeof(float)>>>(m, peak, h, w);
}
"""
VIEW_READS = {
    "star": "if (r == 0) peak[c] = *top;",
    "index": "if (threadIdx.x == 0) peak[c] = top[0];",
    "star_pointer": "T* first = s;\n    if (!r) peak[c] = *first;",
}


@pytest.mark.parametrize("read", sorted(VIEW_READS))
def test_shared_views_read_through_operator_star_lift_to_a_reduce(read: str) -> None:
    src = VIEW_TREE.replace("{read}", VIEW_READS[read])
    got = lift(parse_source(src, "v.cu"), "row_peak")
    assert got.claimed and got.idiom == "reduce", [d.message for d in got.diagnostics]
    text = to_text(got.intent.body[0], locs=False)
    assert "reduce(max" in text and "m[" in text, text


_AXPY_TOML = """kernel = "axpy"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
x = { shape = ["n"], dtype = "float32", role = "in" }
y = { shape = ["n"], dtype = "float32", role = "inout" }
n = 300
a = 1.5
[[check.shapes]]
n = 129
"""
_PEAK_TOML = """kernel = "row_peak"
[launch]
grid = ["h"]
block = [128]
shared_bytes = "128 * 4"
[params]
m = { shape = ["h", "w"], dtype = "float32", role = "in" }
peak = { shape = ["h"], dtype = "float32", role = "out" }
h = 200
w = 40
[check]
rtol = 0.0
atol = 0.0
[[check.shapes]]
h = 5
w = 3
"""


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", ["store_through_star", "load_through_index", "view_star"])
def test_accessor_ports_match_the_cuda_kernel(case: str, target: str, tmp_path: Path) -> None:
    cu = tmp_path / f"{case}.cu"
    if case == "view_star":
        cu.write_text(VIEW_TREE.replace("{read}", VIEW_READS["star"]))
        cu.with_suffix(".toml").write_text(_PEAK_TOML)
    else:
        cu.write_text(_accessor(case))
        cu.with_suffix(".toml").write_text(_AXPY_TOML)
    out = check_kernel(cu, target, tmp_path, max_points=2)
    assert out.status == "match" and out.idiom in ("map", "reduce"), out
