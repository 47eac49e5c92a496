"""A host local holding a compound expression keeps its grouping where the launch uses it:
``inner = TILE - 2 * halo`` in ``(n + inner - 1) / inner`` is one operand, so the grid the
binding writes (in the kernel's size names) counts the blocks the host launches."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.hosttext import joined
from cuda2nki.lift.infer import infer_binding

KERNEL = """#define TILE 128
__global__ void band(float* y, const float* x, int n, int halo) {
    int i = blockIdx.x * (TILE - 2 * halo) + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f;
}
"""

#: host lines computing ``blocks``; the blocks C computes at n = 1000, halo = 4
GRIDS = {
    "difference-as-divisor": (
        "int inner = TILE - 2 * halo;\n    int blocks = (n + inner - 1) / inner;",
        9,
    ),
    "sum-as-factor": ("int span = halo + 2;\n    int blocks = n * span / 640;", 9),
    "difference-as-dividend": ("int rest = n - halo;\n    int blocks = rest / 100 + 1;", 10),
}


@pytest.mark.parametrize("spelling", sorted(GRIDS))
def test_the_written_grid_counts_the_hosts_blocks(spelling: str) -> None:
    lines, blocks = GRIDS[spelling]
    host = f"""
void run(float* y, const float* x, int n, int halo) {{
    {lines}
    band<<<blocks, TILE>>>(y, x, n, halo);
}}
int main() {{ run(0, 0, 1000, 4); return 0; }}"""
    partial, _ = infer_binding(parse_source(KERNEL + host, "band.cu"), "band")
    (grid,) = partial["launch"]["grid"]
    assert int(eval_c_expr(str(grid), {"n": 1000, "halo": 4})) == blocks


@pytest.mark.parametrize(
    ("left", "op", "right", "want"),
    [
        ("a + b", "*", "c", "(a + b) * c"),
        ("a", "-", "b - c", "a - (b - c)"),
        ("a * b", "+", "c / d", "a * b + c / d"),
        ("-a", "/", "f(b + c)", "-a / f(b + c)"),
        ("x << 2", "+", "1", "(x << 2) + 1"),
        ("c ? a : b", "*", "2", "(c ? a : b) * 2"),
    ],
)
def test_operands_are_grouped_only_where_precedence_needs_it(left, op, right, want) -> None:
    assert joined(left, op, right) == want
