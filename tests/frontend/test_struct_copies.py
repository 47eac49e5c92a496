"""A kernel's local copy of its struct parameter (``Params q = p;``, ``const Params q = *p;``)
reads the parameter's members themselves, so guards and indices name the kernel's own
parameters; a copy whose members change, or whose source changes, stays a copy."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.visit import walk
from cuda2nki.simt import run_kernel

HEAD = "struct Params { const float* a; float* out; int n; float s; };\n"

COPIES = {
    "by value": "__global__ void k(Params p) { Params q = p; BODY }",
    "const by value": "__global__ void k(const Params p) { const Params q = p; BODY }",
    "behind a pointer": "__global__ void k(const Params* p) { const Params q = *p; BODY }",
}
BODY = "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < q.n) q.out[i] = q.s * q.a[i];"


def _names(fn: A.Function) -> set[str]:
    return {n.name for n in walk(fn.body) if isinstance(n, A.Name)}


@pytest.mark.parametrize("kernel", list(COPIES.values()), ids=list(COPIES))
def test_a_copy_of_the_struct_parameter_reads_the_parameter(kernel: str) -> None:
    tu = parse_source(HEAD + kernel.replace("BODY", BODY), "k.cu")
    (k,) = tu.kernels
    assert [p.name for p in k.params] == ["p__a", "p__out", "p__n", "p__s"]
    assert not any(n.startswith("q__") for n in _names(k)), _names(k)
    assert {"p__a", "p__out", "p__n", "p__s"} <= _names(k)
    a = np.arange(64, dtype=np.float32)
    args = {"p__a": a, "p__out": np.zeros(64, np.float32), "p__n": 50, "p__s": 2.0}
    out = run_kernel(tu, "k", grid=(1,), block=(64,), args=args)["p__out"]
    np.testing.assert_allclose(out, np.where(np.arange(64) < 50, 2 * a, 0))


#: (body, the member local that stays): each member is judged on its own
KEPT = {
    "a member of the copy changes": ("Params q = p; q.n = q.n - 1; BODY", "q__n"),
    "the parameter changes after the copy": ("Params q = p; p.s = 0.0f; BODY", "q__s"),
    "the copy is read before it is made": ("Params q; int m = q.n; q = p; BODY", "q__n"),
}


@pytest.mark.parametrize(("body", "kept"), list(KEPT.values()), ids=list(KEPT))
def test_a_copy_that_is_not_the_parameter_stays_a_copy(body: str, kept: str) -> None:
    src = HEAD + "__global__ void k(Params p) { " + body.replace("BODY", BODY) + " }"
    (k,) = parse_source(src, "k.cu").kernels
    assert kept in _names(k)
