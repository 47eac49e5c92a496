"""Launch geometry from a struct's ``static constexpr`` member (``x128::size``, the elements of
one 128-bit packet): the member's value, through a typedef or ``using`` of a template instance
whose type argument sizes it."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

PACKET = """
template <class Elem>
struct alignas(16) Packet {
    static constexpr const int size = sizeof(int4) / sizeof(Elem);
    Elem payload[size];
};
struct Tiles { static constexpr int WIDTH = 64; static const int unused = 3; };
"""

KERNEL = """
__global__ void bump(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] + 1.0f;
}
"""

CASES = {
    "typedef-instance": ("typedef Packet<float> f128;", "n, 128 * f128::size", "ceil_div(n,512)"),
    "typedef-of-typedef": (
        "typedef double real;\ntypedef Packet<real> r128;",
        "n, 128 * r128::size",
        "ceil_div(n,256)",
    ),
    "using-instance": ("using h128 = Packet<half>;", "n, h128::size * 128", "ceil_div(n,1024)"),
    "plain-struct": ("", "n, Tiles::WIDTH * 2", "ceil_div(n,128)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_static_member_sizes_the_grid(case: str) -> None:
    alias, div, grid = CASES[case]
    host = f"""{alias}
void run(float* v, int n) {{
    const int blocks = ceil_div({div});
    bump<<<blocks, 128>>>(v, n);
}}
"""
    src = "int ceil_div(int a, int b) { return (a + b - 1) / b; }\n" + PACKET + KERNEL + host
    partial, diags = infer_binding(parse_source(src, "p.cu"), "bump")
    got = [str(g).replace(" ", "") for g in partial.get("launch", {}).get("grid", [])]
    assert got == [grid], (partial, [d.message for d in diags if d.code == "C2N2101"])


def test_a_member_that_is_not_static_is_not_taken() -> None:
    src = (
        "struct Cfg { int rows = 4; };\n"
        + KERNEL
        + "void run(float* v, int n) { bump<<<Cfg::rows, 128>>>(v, n); }\n"
    )
    partial, diags = infer_binding(parse_source(src, "q.cu"), "bump")
    # its initializer is no value of the launch: the grid is a run-time one, covering the guard
    assert partial["launch"]["grid"] != [4]
    assert any("'<<<Cfg::rows, ...>>>' is a run-time value" in d.message for d in diags)
