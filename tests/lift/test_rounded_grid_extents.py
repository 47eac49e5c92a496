"""A pointer indexed by the block alone (one partial result per block) is as long as the grid the
host launches: a grid rounded up (``ceil_div(n, b)``, ``(n + b - 1) / b``) covers a ragged last
block, so the extent is the rounded-up count, never ``n / b`` rounded down."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents
from cuda2nki.lift.infer import infer_binding

#: per block, the sum of its threads' elements into one slot of ``{out}``
PARTIAL = """
__global__ void {name}(const float* src, float* {out}, int {n}) {{
    __shared__ float acc[{b}];
    int t = threadIdx.{d};
    {blk_decl}
    int i = blockIdx.{d} * blockDim.{d} + t;
    acc[t] = i < {n} ? src[i] : 0.0f;
    __syncthreads();
    for (int s = {b} / 2; s > 0; s >>= 1) {{
        if (t < s) acc[t] += acc[t + s];
        __syncthreads();
    }}
    if (t == 0) {out}[{blk}] = acc[0];
}}
"""

SPELLINGS = [
    # (name, out, size, block, axis, block index via a local, grid axis text)
    ("sums", "partial", "n", 256, "x", False, "ceil_div(n, 256)"),
    ("block_max", "per_block", "count", 128, "x", True, "(count + 127) / 128"),
    ("tile_sum", "out", "len", 64, "y", False, "ceil_div(len, 64)"),
    ("chunks", "res", "total", 32, "x", True, "(total + 31) / 32"),
    # rounded up as `(X - 1) / d + 1`: the quotient of a sum, written with its parentheses
    ("last_of", "tot", "size", 256, "x", False, "((size - 1) / 256) + 1"),
]


def _kernel(name: str, out: str, n: str, b: int, d: str, local: bool):
    src = PARTIAL.format(
        name=name,
        out=out,
        n=n,
        b=b,
        d=d,
        blk_decl=f"int blk = blockIdx.{d};" if local else "",
        blk="blk" if local else f"blockIdx.{d}",
    )
    return parse_source(src, f"{name}.cu").function(name)


@pytest.mark.parametrize("spelling", SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_a_per_block_result_covers_the_last_partial_block(spelling: tuple) -> None:
    name, out, n, b, d, local, axis = spelling
    fn = _kernel(name, out, n, b, d, local)
    grid = [axis] if d == "x" else ["1", axis]
    block = [b] if d == "x" else [1, b]
    got = extents(fn, {"grid": grid, "block": block})
    shape = got[out].shape
    assert shape is not None and len(shape) == 1, shape
    assert got["src"].shape == (n,)
    for size in (1, b - 1, b + 1, 3 * b + 5, 1000):
        launched = -(-size // b)
        assert eval_c_expr(str(shape[0]), {n: size}) == launched, (shape, size)


@pytest.mark.parametrize("b", [128, 256])
def test_a_grid_written_rounding_down_keeps_its_count(b: int) -> None:
    """``n / b`` blocks (the host drops the ragged tail itself): the blocks launched."""
    fn = _kernel("sums", "partial", "n", b, "x", False)
    got = extents(fn, {"grid": [f"n / {b}"], "block": [b]})
    for size in (b, b + 1, 5 * b - 1):
        assert eval_c_expr(str(got["partial"].shape[0]), {"n": size}) == size // b


@pytest.mark.parametrize(
    "launch",
    [
        "int blocks = (n + 255) / 256; sums<<<blocks, 256>>>(x, p, n);",
        "sums<<<(n + 256 - 1) / 256, 256>>>(x, p, n);",
        "dim3 g((n + 255) / 256); dim3 t(256); sums<<<g, t>>>(x, p, n);",
    ],
)
def test_the_inferred_binding_sizes_partials_by_the_launched_grid(launch: str) -> None:
    src = PARTIAL.format(
        name="sums", out="partial", n="n", b=256, d="x", blk_decl="", blk="blockIdx.x"
    )
    src += f"\nvoid run(const float* x, float* p, int n) {{ {launch} }}\n"
    partial, _ = infer_binding(parse_source(src, "s.cu"), "sums")
    shape = partial["params"]["partial"]["shape"]
    for size in (100, 256, 300, 513):
        assert eval_c_expr(str(shape[0]), {"n": size}) == -(-size // 256), shape


@pytest.mark.parametrize("num", [(-1, 4096), (31, 32), (7, 8)])
def test_shape_text_keeps_a_quotient_of_a_sum_whole(num: tuple) -> None:
    """Shapes from symbolic execution and from index expressions alike: ``(c + X) / d`` is
    written so that the binding reads that quotient, not ``c + X / d``."""
    from cuda2nki.lift import affine as af
    from cuda2nki.lift.affine import DivAtom, Poly
    from cuda2nki.lift.extentshape import _text
    from cuda2nki.lift.indexshape import poly_text

    c, d = num
    p = Poly.atom(DivAtom(af.sym("C") + c, Poly.const(d))) * 32 + 1
    for text in (poly_text(p), _text(p)):
        for size in (1, d - 1, d + 3, 10 * d + 1):
            want = (size + c) // d * 32 + 1
            assert eval_c_expr(str(text), {"C": size}) == want, text
