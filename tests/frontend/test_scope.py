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
