"""Launch geometry written the old way: a grid rounded up by a remainder test (as an expression
or as an ``if`` after the division) is ``ceil_div``, and a ``dim3`` filled member by member takes
the members' values at the launch."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
#define NUMBER_THREADS 128
__global__ void halve(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = 0.5f * v[i];
}
"""

#: spellings of `blocks = ceil(n / 128)` that must all give the grid ceil_div(n, 128)
ROUNDING = {
    "ternary": "int blocks = n / 128 + (n % 128 ? 1 : 0);",
    "negated-ternary": "int blocks = (n / 128) + (!(n % 128) ? 0 : 1);",
    "comparison": "int blocks = (n % 128 != 0) + n / 128;",
    "equal-zero": "int blocks = n / 128 + ((n % 128 == 0) ? 0 : 1);",
    "if-increment": "int blocks = n / 128;\n    if (n % 128 != 0) blocks++;",
    "if-plus-one": "int blocks;\n    blocks = n / 128;\n    if (n % 128) { blocks = blocks + 1; }",
    "if-plus-equals": "int blocks = n / 128;\n    if (0 != n % 128)\n        blocks += 1;",
}


def _grid(partial: dict) -> list:
    grid = partial.get("launch", {}).get("grid") or []
    return [str(g).replace(" ", "") for g in grid]


@pytest.mark.parametrize("case", sorted(ROUNDING))
def test_rounding_up_by_a_remainder_test_is_ceil_div(case: str) -> None:
    host = f"void run(float* v, int n) {{\n    {ROUNDING[case]}\n    halve<<<blocks, 128>>>(v, n);\n}}\n"
    partial, _ = infer_binding(parse_source(KERNEL + host, "r.cu"), "halve")
    assert _grid(partial) == ["ceil_div(n,128)"], partial["launch"]


@pytest.mark.parametrize(
    "wrong",
    [
        "int blocks = n / 128 + (n % 64 ? 1 : 0);",  # another divisor
        "int blocks = n / 128 + (n % 128 ? 0 : 1);",  # the correction inverted
        "int blocks = n / 128;\n    if (n % 128 == 0) blocks++;",
        "int blocks = n / 128;\n    if (n % 128) blocks += 2;",
    ],
)
def test_other_corrections_are_not_taken_for_rounding_up(wrong: str) -> None:
    host = f"void run(float* v, int n) {{\n    {wrong}\n    halve<<<blocks, 128>>>(v, n);\n}}\n"
    partial, diags = infer_binding(parse_source(KERNEL + host, "w.cu"), "halve")
    # not read as rounding up: either another grid, or one the host's value is not known for
    # (``n`` comes from no caller), which covers the guard and says so
    assert _grid(partial) != ["ceil_div(n,128)"] or any(
        "is a run-time value" in d.message for d in diags
    )


DIM3_MEMBERS = {
    "members-then-launch": """
void run(float* v, int n) {
    dim3 threads;
    dim3 blocks;
    int blocks_x;
    threads.x = NUMBER_THREADS;
    blocks_x = n / threads.x;
    if (n % threads.x != 0) {
        blocks_x = blocks_x + 1;
    }
    blocks.x = blocks_x;
    halve<<<blocks, threads>>>(v, n);
}""",
    "reassigned-member": """
void run(float* v, int n) {
    dim3 threads, blocks;
    threads.x = 64;
    threads.x = NUMBER_THREADS;
    blocks.x = (n + threads.x - 1) / threads.x;
    halve<<<blocks, threads>>>(v, n);
}""",
}


@pytest.mark.parametrize("case", sorted(DIM3_MEMBERS))
def test_a_dim3_filled_member_by_member(case: str) -> None:
    partial, _ = infer_binding(parse_source(KERNEL + DIM3_MEMBERS[case], "d.cu"), "halve")
    assert partial["launch"]["block"] in ([128], [128, 1, 1])
    assert _grid(partial)[0] in ("ceil_div(n,128)", "(n+128-1)/128"), partial
