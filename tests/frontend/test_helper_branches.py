"""A host helper that returns from one of several branches (``if (r == 0) return g; else
return g + b - r;``, an early return then a fall-through one, an ``else if`` chain) gives a launch
the value of the branch its arguments take; a helper whose branches assign a local is not
evaluated (a default with a note instead)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
__global__ void shift(float* out, const float* in, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] + 1.0f;
}
"""

#: spelling -> (helper, launch, grid)
CASES = {
    "if_else_blocks": (
        """
size_t round_up(int group, int global) {
    int r = global % group;
    if (r == 0) {
        return global;
    } else {
        return global + group - r;
    }
}
""",
        "size_t g = round_up(96, 1000); shift<<<g / 96, 96>>>(o, x, 5000);",
        11,
    ),
    "early_return_then_fall_through": (
        """
static int padded(int n, int m) {
    const int rem = n % m;
    if (rem == 0) return n;
    return n + (m - rem);
}
""",
        "int total = padded(640, 128); shift<<<total / 128, 128>>>(o, x, 5000);",
        5,
    ),
    "else_if_chain": (
        """
int blocks_for(int n) {
    if (n < 256) return 1;
    else if (n < 4096) return 4;
    else return 16;
}
""",
        "shift<<<blocks_for(3000), 64>>>(o, x, 3000);",
        4,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_branch_the_arguments_take_gives_the_value(case: str) -> None:
    helper, launch, grid = CASES[case]
    src = KERNEL + helper + "int main() { float *o, *x; " + launch + " return 0; }"
    tu = parse_source(src, "t.cu")
    bnd, diags = binding_from_inference(tu, "shift")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert list(bnd.grid) == [grid]


def test_a_branch_that_assigns_is_not_followed() -> None:
    helper = """
int blocks_for(int n) {
    int b = 2;
    if (n > 100) { b = 8; return b; }
    return b;
}
"""
    src = (
        KERNEL + helper + "int main() { float *o, *x; shift<<<blocks_for(500), 64>>>(o, x, 500); }"
    )
    tu = parse_source(src, "t.cu")
    bnd, _ = binding_from_inference(tu, "shift")
    assert bnd is None or list(bnd.grid) != [2]
