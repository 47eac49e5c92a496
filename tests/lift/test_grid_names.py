"""A launch grid written with a host constant that is also passed as a size argument follows
that parameter (``(ds + 255) / 256`` with ``ds`` passed as ``n`` is ``(n + 255) / 256``), so that
the grid shrinks with the size check runs the kernel at."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.gridnames import grid_in_params
from cuda2nki.lift.infer import binding_from_inference, infer_binding

MAP = """
{decl}
__global__ void bump(const float* src, float* dst, int count) {{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) {{
        float v = src[t], halvings = 0.f;
        while (v > 1.0f) {{  // a data-dependent loop: the kernel is not executed symbolically
            v *= 0.5f;
            halvings += 1.f;
        }}
        dst[t] = halvings + v;
    }}
}}
int main() {{
    float *a, *b;
    bump<<<{grid}, {block}>>>(a, b, {arg});
    return 0;
}}
"""


@pytest.mark.parametrize(
    ("decl", "grid", "block", "arg"),
    [
        ("const size_t ds = 1024 * 1024 * 64;", "(ds + 255) / 256", "256", "ds"),
        ("constexpr int LEN = 1 << 22;", "(LEN + 127) / 128", "128", "LEN"),
        ("static const int total = 3000000;", "(total - 1) / 512 + 1", "512", "total"),
        ("const int elems = 1 << 21;", "elems / 64", "64", "elems"),
    ],
)
def test_a_constant_grid_follows_the_size_passed_with_it(
    decl: str, grid: str, block: str, arg: str
) -> None:
    tu = parse_source(MAP.format(decl=decl, grid=grid, block=block, arg=arg), "m.cu")
    partial, _ = infer_binding(tu, "bump")
    (g,) = partial["launch"]["grid"]
    assert isinstance(g, str) and "count" in g, g
    n = partial["params"]["count"]
    assert n < 10**6  # a simulable size
    blocks = int(eval_c_expr(g, {"count": n}))
    assert blocks * int(block) >= n and (blocks - 1) * int(block) < n
    assert binding_from_inference(tu, "bump")[0] is not None


def test_a_constant_not_passed_keeps_the_grid() -> None:
    src = MAP.format(decl="const int G = 40;", grid="G", block="256", arg="1000")
    partial, _ = infer_binding(parse_source(src, "m.cu"), "bump")
    assert partial["launch"]["grid"] == [40]


@pytest.mark.parametrize(
    ("grid", "text", "names", "want"),
    [
        (
            [4, 8],
            "dim3((W + 15) / 16, (H + 15) / 16)",
            {"W": "w", "H": "h"},
            ["(w + 15) / 16", "(h + 15) / 16"],
        ),
        ([4, 8], "dim3((W + 15) / 16, 8)", {"W": "w"}, ["(w + 15) / 16", 8]),
        ([5], "(W + 15) / 16", {"W": "w"}, [5]),  # not the same number: left alone
        ([4], "blocks", {"W": "w"}, [4]),  # a dim3 variable: nothing to rewrite
        ([4], "ceil_div(W, 16)", {"W": "w"}, ["ceil_div(w, 16)"]),
    ],
)
def test_grid_in_params(grid: list, text: str, names: dict, want: list) -> None:
    assert grid_in_params(grid, text, names, {"w": 64, "h": 128}) == want
