"""A device helper that takes a struct by non-const reference only to avoid a copy
(``void put(Params& p, int i, float v) { p.out[i] = v; }``) receives a kernel's by-value struct
as a copy, member by member; a helper that changes the struct itself keeps the reference."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel

SRC = """
struct Params { const float* a; float* out; int n; float s; };
HELPERS
__global__ void apply(Params p) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < p.n) put(p, i, get(p, i));
}
"""

READERS = {
    "write through a member pointer": (
        "__device__ float get(Params& p, int i) { return p.s * p.a[i]; }\n"
        "__device__ void put(Params& q, int i, float v) { q.out[i] = v; }"
    ),
    "pointer member read into a local": (
        "__device__ float get(Params &p, int i) { const float* src = p.a; return p.s * src[i]; }\n"
        "__device__ void put(Params& q, int k, float v) { float* dst = q.out; dst[k] += v; }"
    ),
    "mixed with a const reference": (
        "__device__ float get(const Params& p, int i) { return p.a[i] * p.s; }\n"
        "__device__ void put(Params& q, int i, float v) { (q.out)[i] = v; }"
    ),
}


@pytest.mark.parametrize("helpers", list(READERS.values()), ids=list(READERS))
def test_a_helper_reading_its_reference_gets_the_members(helpers: str) -> None:
    tu = parse_source(SRC.replace("HELPERS", helpers), "k.cu")
    assert not tu.rejected, tu.rejected
    (k,) = tu.kernels
    assert [p.name for p in k.params] == ["p__a", "p__out", "p__n", "p__s"]
    a = np.arange(100, dtype=np.float32)
    args = {"p__a": a, "p__out": np.zeros(100, np.float32), "p__n": 90, "p__s": 0.5}
    out = run_kernel(tu, "apply", grid=(1,), block=(128,), args=args)["p__out"]
    want = np.where(np.arange(100) < 90, 0.5 * a, 0).astype(np.float32)
    np.testing.assert_allclose(out, want)


CHANGERS = [
    "__device__ void put(Params& q, int i, float v) { q.out[i] = v; q.n = 0; }",
    "__device__ void put(Params& q, int i, float v) { q.out[i] = v; q.s++; }",
    "__device__ void put(Params& q, int i, float v) { q = Params(); }",
    "__device__ void zero(float* x) { *x = 0; }\n"
    "__device__ void put(Params& q, int i, float v) { zero(&q.s); }",
]


@pytest.mark.parametrize("put", CHANGERS)
def test_a_helper_that_changes_the_struct_keeps_the_reference(put: str) -> None:
    from cuda2nki.frontend.cst import parse_bytes
    from cuda2nki.frontend.refcopy import unchanged_reference

    root = parse_bytes(put.encode()).root_node
    fn = [c for c in root.named_children if c.type == "function_definition"][-1]
    assert not unchanged_reference(fn, "q")
