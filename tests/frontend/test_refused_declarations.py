"""A local whose declaration is refused (its type unsupported) stays a known name: its uses add
no "use of undeclared identifier" (C2N1020) to the declaration's own diagnostic, so the kernel's
blocking ids name the real cause.  A name never declared is still reported."""

from __future__ import annotations

import pytest

_CASES = [
    (
        """\
template <typename K, typename V> struct Pair {
    __device__ Pair(K k_, V v_) : k(k_), v(v_) {}
    __device__ bool operator<(const Pair& o) const { return k < o.k; }
    K k; V v;
};
__global__ void k(const int* in, int* out) {
    Pair<int, bool> pv(in[threadIdx.x], true);
    out[threadIdx.x] = pv.k + (pv.v ? 1 : 0);
    pv = Pair<int, bool>(pv.k, false);
}
""",
        "pv",
    ),
    (
        """\
template <typename T, int N> struct Loader { struct Storage { T x[N]; }; };
__global__ void k(const int* in, int* out) {
    typedef Loader<int, 128> L;
    __shared__ typename L::Storage loadi;
    out[threadIdx.x] = loadi.x[threadIdx.x] + in[threadIdx.x];
}
""",
        "loadi",
    ),
    (
        """\
__global__ void k(const int* in, int* out) {
    Mystery a, *b = &a, &c = a;
    out[threadIdx.x] = in[threadIdx.x] + a.n + b->n + c.n;
}
""",
        "a",
    ),
    (
        """\
struct Span {
    const int* s; int n;
    __device__ Span(const int* p, int k) { s = p; n = k; }
};
__global__ void k(const int* in, int* out) {
    Span w(in, 3);
    out[threadIdx.x] = w.s[threadIdx.x] + w.n;
}
""",
        "w",
    ),
    (
        """\
struct Cell { int key; bool seen; };
__device__ Cell& pick(Cell* t, int i) { return t[i]; }
__global__ void k(const int* in, int* out) {
    Cell cells[4];
    Cell& c = pick(cells, threadIdx.x & 3);
    c.key = in[threadIdx.x];
    out[threadIdx.x] = c.key;
}
""",
        "c",
    ),
]


@pytest.mark.parametrize(("src", "name"), _CASES)
def test_uses_of_a_refused_declaration_add_no_undeclared_errors(parse, src, name):
    tu = parse(src + "int main() { int *i, *o; k<<<1, 32>>>(i, o); }\n")
    assert "k" in tu.rejected
    codes = [d.code for d in tu.rejected["k"]]
    assert "C2N1020" not in codes, tu.rejected["k"]
    assert codes[0] in ("C2N1025", "C2N1022"), codes


def test_an_undeclared_name_is_still_reported(parse):
    tu = parse("""\
__global__ void k(const int* in, int* out) {
    Mystery a;
    out[threadIdx.x] = in[threadIdx.x] + nowhere;
}
int main() { int *i, *o; k<<<1, 32>>>(i, o); }
""")
    msgs = [d.message for d in tu.rejected["k"] if d.code == "C2N1020"]
    assert msgs and all("nowhere" in m for m in msgs)
