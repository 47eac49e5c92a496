"""A struct passed by value whose pointer members the host sets from pointers it allocated
elsewhere: ``p.vals = d_v;``, ``Pair p = {d_k, d_v};``, ``Pair p{...}``, designated
initializers, a braced assignment, a launcher that receives the struct, a nested struct.  Each
pointer member takes the allocation of the pointer stored in it (a scatter target that no
index bounds then still binds) and each number member the value stored in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file, parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

KERNEL = """
struct Pair { int* keys; float* vals; };
__global__ void mark(Pair p, int n, float v) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) p.vals[p.keys[i]] = v;
}
"""

#: the host half of each spelling: `k` and `w` allocated, then stored in the struct
SPELLINGS = {
    "member assignments": "Pair p; p.keys = k; p.vals = w;",
    "aggregate initializer": "Pair p = {k, w};",
    "list initialization": "Pair p{k, w};",
    "designated, out of order": "Pair p = {.vals = w, .keys = k};",
    "compound literal": "Pair p = (Pair){k, w};",
    "braced assignment": "Pair p; p = {k, w};",
    "cast stored": "Pair p; p.keys = (int*)k; p.vals = (float*)w;",
}


def _host(store: str, count: str = "n") -> str:
    return f"""
int main() {{
    int n = 512;
    int* k; float* w;
    cudaMalloc((void**)&k, n * sizeof(int));
    cudaMalloc(&w, {count} * sizeof(float));
    {store}
    mark<<<(n + 127) / 128, 128>>>(p, n, 1.5f);
}}
"""


@pytest.mark.parametrize("store", list(SPELLINGS.values()), ids=list(SPELLINGS))
def test_a_pointer_member_takes_the_allocation_of_what_is_stored_in_it(store: str) -> None:
    src = KERNEL + _host(store)
    partial, diags = infer_binding(parse_source(src, "k.cu"), "mark")
    p = partial["params"]
    assert p["p__vals"]["shape"] == ["n"], (p.get("p__vals"), [d.message for d in diags])
    assert p["p__vals"]["role"] == "out" and p["p__keys"]["role"] == "in"
    bnd, diags = binding_from_inference(parse_source(src, "k.cu"), "mark")
    assert bnd is not None, [d.message for d in diags]


def test_a_braced_value_passed_at_the_launch_itself() -> None:
    src = (
        KERNEL
        + """
int main() {
    int n = 300;
    int* k; float* w;
    cudaMalloc(&k, n * sizeof(int));
    cudaMalloc(&w, n * sizeof(float));
    mark<<<(n + 127) / 128, 128>>>(Pair{k, w}, n, 1.5f);
}
"""
    )
    partial, diags = infer_binding(parse_source(src, "k.cu"), "mark")
    p = partial["params"]
    assert p["p__vals"]["shape"] == ["n"], (p.get("p__vals"), [d.message for d in diags])
    assert partial["launch"]["grid"] in (["ceil_div(n, 128)"], ["((n + 127) / 128)"])
    assert p["v"] in (1.5, {"value": 1.5}), p["v"]


def test_a_member_allocation_in_other_units_than_the_launch_size() -> None:
    """The scatter target is larger than the launch: its own allocation, not the grid."""
    src = KERNEL + _host("Pair p = {k, w};", count="4 * n")
    partial, _ = infer_binding(parse_source(src, "k.cu"), "mark")
    assert partial["params"]["p__vals"]["shape"] in (["4*n"], ["4 * n"], [2048]), partial


LAUNCHER = """
typedef struct { const float* x; float* y; int len; float alpha; } Axpy;
__global__ void axpy(Axpy s, const int* perm) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s.len) s.y[perm[i]] += s.alpha * s.x[i];
}
void launch(const Axpy& s, const int* perm) {
    axpy<<<(s.len + 63) / 64, 64>>>(s, perm);
}
int main() {
    int n = 3000;
    float *dx, *dy; int* dp;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, 2 * n * sizeof(float));
    cudaMalloc(&dp, n * sizeof(int));
    Axpy s = {dx, dy, n, 0.75f};
    launch(s, dp);
}
"""


def test_a_launcher_that_receives_the_struct_reads_its_callers_initializer() -> None:
    partial, diags = infer_binding(parse_source(LAUNCHER, "k.cu"), "axpy")
    p = partial["params"]
    assert p["s__alpha"] in (0.75, {"value": 0.75}), p["s__alpha"]
    assert p["s__y"]["shape"] in ([6000], ["2*s__len"], ["2 * s__len"]), p["s__y"]
    bnd, diags = binding_from_inference(parse_source(LAUNCHER, "k.cu"), "axpy")
    assert bnd is not None, [d.message for d in diags]


NESTED = """
struct Bufs { const float* in; float* out; };
struct Args { Bufs b; int n; float gain; };
__global__ void route(Args a, const int* to) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < a.n) a.b.out[to[i]] = a.gain * a.b.in[i];
}
int main() {
    int n = 700;
    float *din, *dout; int* dto;
    cudaMalloc(&din, n * sizeof(float));
    cudaMalloc(&dout, n * sizeof(float));
    cudaMalloc(&dto, n * sizeof(int));
    STORE
    route<<<(n + 127) / 128, 128>>>(a, dto);
}
"""


@pytest.mark.parametrize(
    "store",
    ["Args a = {{din, dout}, n, 3.0f};", "Args a; a.b.in = din; a.b.out = dout; a.gain = 3.0f;"],
    ids=["nested braces", "nested member assignments"],
)
def test_a_nested_struct_member_takes_its_allocation(store: str) -> None:
    src = NESTED.replace("STORE", store)
    partial, diags = infer_binding(parse_source(src, "k.cu"), "route")
    p = partial["params"]
    assert p["a__b__out"]["shape"] in (["a__n"], [700]), (p, [d.message for d in diags])
    assert p["a__gain"] in (3.0, {"value": 3.0}), p["a__gain"]


def test_brace_elision_into_a_nested_struct_is_left_unknown() -> None:
    """``{din, dout, n}`` fills ``b`` without braces: the elements are not matched to members
    (a wrong allocation would be worse than none)."""
    src = NESTED.replace("STORE", "Args a = {din, dout, n, 3.0f};")
    partial, _ = infer_binding(parse_source(src, "k.cu"), "route")
    assert partial["params"].get("a__gain") not in (3.0, {"value": 3.0}, 700)


HEADER = """
#pragma once
typedef struct {
    float* src;
    int* slot;
    float* dst;
    int count;
} Scatter;
"""

HEADER_MAIN = """
#include "scatter.h"
__global__ void place(Scatter s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s.count) s.dst[s.slot[i]] = s.src[i];
}
int main() {
    int n = 1000;
    float *a, *b; int* c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(int));
    Scatter s;
    s.src = a; s.dst = b; s.slot = c; s.count = n;
    place<<<(n + 255) / 256, 256>>>(s);
}
"""


def test_a_struct_declared_in_a_header(tmp_path: Path) -> None:
    (tmp_path / "scatter.h").write_text(HEADER)
    main = tmp_path / "main.cu"
    main.write_text(HEADER_MAIN)
    partial, diags = infer_binding(parse_file(str(main)), "place")
    p = partial["params"]
    assert p["s__dst"]["shape"] in (["s__count"], [1000]), (p, [d.message for d in diags])
    assert p["s__slot"]["role"] == "in" and p["s__dst"]["role"] == "out"


INIT_FILE = """
struct Table { int* keys; float* vals; int count; };
Table upload(int n) {
    Table t;
    t.count = n;
    size_t bytes = 3 * n * sizeof(float);
    cudaMalloc((void**)&t.keys, n * sizeof(int));
    cudaMalloc((void**)&t.vals, bytes);
    return t;
}
"""

RUN_FILE = """
struct Table { int* keys; float* vals; int count; };
__global__ void spread(Table t, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < t.count) t.vals[t.keys[i]] = v;
}
void run(Table t) { spread<<<(t.count + 127) / 128, 128>>>(t, 0.5f); }
"""


def test_members_allocated_in_another_file_of_the_tree(tmp_path: Path) -> None:
    (tmp_path / "init.cu").write_text(INIT_FILE.replace("3 * n", "3 * 400"))
    run = tmp_path / "run.cu"
    run.write_text(RUN_FILE)
    partial, diags = infer_binding(parse_file(str(run)), "spread")
    p = partial["params"]
    assert p["t__vals"]["shape"] == [1200], (p.get("t__vals"), [d.message for d in diags])
    assert p["t__keys"]["role"] == "in" and p["t__vals"]["role"] == "out"


SETUP = """
struct Pair { int* keys; float* vals; };
__global__ void mark(Pair p, int n, float v) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) p.vals[p.keys[i]] = v;
}
static void setup(Pair* out, int n) {
    int* k;
    float* buf;
    cudaMalloc((void**)&k, n * sizeof(int));
    cudaMalloc((void**)&buf, 2 * 640 * sizeof(float));
    STORE
}
int main() {
    int n = 640;
    Pair p;
    setup(&p, n);
    mark<<<(n + 63) / 64, 64>>>(p, n, 2.0f);
}
"""


@pytest.mark.parametrize(
    "store", ["out->keys = k; out->vals = buf;", "(*out).keys = k; (*out).vals = (float*)buf;"]
)
def test_a_member_stored_by_a_setup_function(store: str) -> None:
    src = SETUP.replace("STORE", store)
    partial, diags = infer_binding(parse_source(src, "k.cu"), "mark")
    p = partial["params"]
    assert p["p__vals"]["shape"] == [1280], (p.get("p__vals"), [d.message for d in diags])


TEMPLATE = """
template <typename T>
struct Span { T* data; int len; };
template <typename T>
__global__ void gather_axpy(Span<T> x, Span<T> y, T a, const int* perm) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < y.len) y.data[i] += a * x.data[perm[i]];
}
int main() {
    int n = 999;
    Span<float> x, y;
    x.len = 4 * n; y.len = n;
    cudaMalloc(&x.data, 4 * n * sizeof(float));
    cudaMalloc(&y.data, n * sizeof(float));
    int* perm; cudaMalloc(&perm, n * sizeof(int));
    gather_axpy<float><<<(n + 127) / 128, 128>>>(x, y, 2.0f, perm);
}
"""


def test_an_instance_of_a_struct_template_passed_by_value() -> None:
    partial, diags = infer_binding(parse_source(TEMPLATE, "k.cu"), "gather_axpy")
    p = partial["params"]
    assert p["x__data"]["shape"] in (["x__len"], [3996]), (p, [d.message for d in diags])
    assert p["y__len"] in (999, {"value": 999}) and p["a"] in (2.0, {"value": 2.0}), p
    bnd, diags = binding_from_inference(parse_source(TEMPLATE, "k.cu"), "gather_axpy")
    assert bnd is not None, [d.message for d in diags]
