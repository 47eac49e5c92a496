"""Which of a file's diagnostics concern which kernel (cuda2nki.frontend.scope)."""

from __future__ import annotations

from cuda2nki.diagnostics import Severity
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.scope import for_kernel, owners

SRC = """\
#include "absent_header.cuh"
__global__ void fine(float* y, int n) {
    if (threadIdx.x < n) y[threadIdx.x] = 1.0f;
}
__global__ void broken(float* y, int n) {
    if (threadIdx.x < n) y[threadIdx.x] = undeclared_helper(n);
}
__global__ void also_fine(float* z) { z[threadIdx.x] = 2.0f; }
"""


def _codes(diags) -> dict[str, Severity]:
    return {d.code: d.severity for d in diags}


def test_a_kernels_errors_are_notes_or_absent_for_the_other_kernels() -> None:
    tu = parse_source(SRC, "k.cu")
    assert "broken" in tu.rejected
    owned = owners(tu)
    assert any(names == frozenset({"broken"}) for names in owned.values())
    for kernel in ("fine", "also_fine"):
        noted = for_kernel(tu, kernel)
        assert _codes(noted)["C2N1021"] == Severity.NOTE
        assert _codes(noted)["C2N1004"] == Severity.WARNING  # the file's, everyone's
        assert any("in kernel 'broken'" in n for d in noted for n in d.notes)
        dropped = for_kernel(tu, kernel, others="drop")
        assert set(_codes(dropped)) == {"C2N1004"}
    own = for_kernel(tu, "broken")
    assert _codes(own) == {"C2N1004": Severity.WARNING, "C2N1021": Severity.ERROR}


UNCALLED = """\
struct Pair { float a, b; };
__device__ Pair& broken_helper(Pair* ps, int i) { if (i < 0) throw i; return ps[i]; }
__device__ float fine_helper(float v) { return 2.0f * v; }
__global__ void uses_fine(float* y, int n) {
    if (threadIdx.x < n) y[threadIdx.x] = fine_helper(y[threadIdx.x]);
}
__global__ void plain(float* z) { z[threadIdx.x] = 1.0f; }
"""


def test_a_refused_device_function_no_kernel_calls_concerns_no_kernel() -> None:
    tu = parse_source(UNCALLED, "k.cu")
    assert tu.rejected == {}
    assert "broken_helper" in "".join(tu.refused_device)
    errors = [d for d in tu.diagnostics if d.severity == Severity.ERROR]
    assert errors and all(d.loc.line == 2 for d in errors)
    for kernel in ("uses_fine", "plain"):
        noted = for_kernel(tu, kernel)
        assert all(d.severity <= Severity.NOTE for d in noted if d.loc.line == 2)
        assert any("which no kernel calls" in n for d in noted for n in d.notes)
        assert not [d for d in for_kernel(tu, kernel, others="drop") if d.loc.line == 2]


def test_a_refused_device_function_a_kernel_calls_is_that_kernels_error() -> None:
    src = UNCALLED + "__global__ void calls_it(Pair* ps) { broken_helper(ps, 0).a = 1.0f; }\n"
    tu = parse_source(src, "k.cu")
    assert "calls_it" in tu.rejected
    own = for_kernel(tu, "calls_it")
    assert any(d.severity == Severity.ERROR and d.loc.line == 2 for d in own)
    assert all(d.severity <= Severity.NOTE for d in for_kernel(tu, "plain") if d.loc.line == 2)
