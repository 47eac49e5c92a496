"""Shared-memory GEMM tiles filled under a guard, zero elsewhere: the ``else`` branch (or a
second ``if`` on the negated guard, or the guard split over nested ``if``s) writes the zero that
a ternary would.  The complementary writes cover every thread, so a read of the tile resolves to
one masked load (zero outside) and the kernel lifts to a single contraction -- on both targets
the port matches the CUDA kernel on square and rectangular shapes.  Writes that leave some
threads' element unwritten in a K-step (stale from the previous step) are still refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.api import lift
from cuda2nki.frontend import parse_source
from cuda2nki.ir.printer import to_text
from cuda2nki.lift import affine as af
from cuda2nki.lift.complement import follows
from tests.port.acceptance import check_kernel

#: a square TS x TS tile per block; {r}/{c} name the thread's row and column in the tile
SQUARE = """
#define TS {ts}
__global__ void {name}(const float* P, const float* Q, float* R, int rows, int cols, int inner) {{
    __shared__ float tp[TS][TS];
    __shared__ float tq[TS][TS];
    int {c} = threadIdx.x, {r} = threadIdx.y;
    int gr = blockIdx.y * TS + {r};
    int gc = blockIdx.x * TS + {c};
    float s = 0.0f;
    for (int kt = 0; kt < (inner + TS - 1) / TS; kt++) {{
        int pc = kt * TS + {c};
        int qr = kt * TS + {r};
{loads}
        __syncthreads();
        for (int e = 0; e < TS; ++e) s += tp[{r}][e] * tq[e][{c}];
        __syncthreads();
    }}
    if (gr < rows && gc < cols) R[gr * cols + gc] = s;
}}
void run(const float* P, const float* Q, float* R, int rows, int cols, int inner) {{
    dim3 b(TS, TS);
    dim3 g((cols + TS - 1) / TS, (rows + TS - 1) / TS);
    {name}<<<g, b>>>(P, Q, R, rows, cols, inner);
}}
"""

#: one guard per tile, the zero in the else branch (braced and not)
IF_ELSE = """
        if (gr < rows && pc < inner) tp[{r}][{c}] = P[gr * inner + pc];
        else tp[{r}][{c}] = 0.0f;
        if (qr < inner && gc < cols) {{ tq[{r}][{c}] = Q[qr * cols + gc]; }}
        else {{ tq[{r}][{c}] = 0; }}"""
#: the guard split over two nested ifs, each with its own zero-filling else
NESTED = """
        if (gr < rows) {{
            if (pc < inner) tp[{r}][{c}] = P[gr * inner + pc];
            else tp[{r}][{c}] = 0.0f;
        }} else {{
            tp[{r}][{c}] = 0.0f;
        }}
        if (gc < cols)
            if (qr < inner) tq[{r}][{c}] = Q[qr * cols + gc]; else tq[{r}][{c}] = 0.0f;
        else
            tq[{r}][{c}] = 0.0f;"""
#: the zero written first under the negated guard; two separate ifs, one holding a ternary
NEGATED = """
        if (pc >= inner || gr >= rows) tp[{r}][{c}] = 0.0f;
        else tp[{r}][{c}] = P[gr * inner + pc];
        if (!(qr < inner)) tq[{r}][{c}] = 0.0f;
        if (qr < inner) tq[{r}][{c}] = gc < cols ? Q[qr * cols + gc] : 0.0f;"""
#: A's zero fill skips the rows past the matrix: those threads read the previous K-step's tile
STALE_ROWS = """
        if (gr < rows && pc < inner) tp[{r}][{c}] = P[gr * inner + pc];
        else if (gr < rows) tp[{r}][{c}] = 0.0f;
        if (qr < inner && gc < cols) tq[{r}][{c}] = Q[qr * cols + gc]; else tq[{r}][{c}] = 0.0f;"""
#: no zero fill for A at all
NO_FILL = """
        if (gr < rows && pc < inner) tp[{r}][{c}] = P[gr * inner + pc];
        if (qr < inner && gc < cols) tq[{r}][{c}] = Q[qr * cols + gc]; else tq[{r}][{c}] = 0.0f;"""

SPELLINGS = {"if_else": IF_ELSE, "nested": NESTED, "negated": NEGATED}

#: rectangular tiles (16 x 16 of A, 16 x 32 of B, 32 x 16 threads), only half the threads load A
RECT = """
#define BM 16
#define BN 32
#define BK 16
__global__ void rect(const float* P, const float* Q, float* R, int rows, int cols, int inner) {
    __shared__ float tp[BM][BK];
    __shared__ float tq[BK][BN];
    int x = threadIdx.x, y = threadIdx.y;
    int gr = blockIdx.y * BM + y, gc = blockIdx.x * BN + x;
    float s = 0.0f;
    for (int k0 = 0; k0 < inner; k0 += BK) {
        if (x < BK) {
            if (gr < rows && k0 + x < inner) tp[y][x] = P[gr * inner + k0 + x];
            else tp[y][x] = 0.0f;
        }
        if (k0 + y >= inner || gc >= cols) tq[y][x] = 0.0f;
        else tq[y][x] = Q[(k0 + y) * cols + gc];
        __syncthreads();
        for (int e = 0; e < BK; ++e) s += tp[y][e] * tq[e][x];
        __syncthreads();
    }
    if (gr < rows && gc < cols) R[gr * cols + gc] = s;
}
void run(const float* P, const float* Q, float* R, int rows, int cols, int inner) {
    dim3 b(BN, BM);
    dim3 g((cols + BN - 1) / BN, (rows + BM - 1) / BM);
    rect<<<g, b>>>(P, Q, R, rows, cols, inner);
}
"""


def _square(spelling: str, ts: int, rc: tuple[str, str] = ("ty", "tx"), name: str = "gemm"):
    r, c = rc
    loads = spelling.format(r=r, c=c)
    return SQUARE.format(ts=ts, name=name, loads=loads, r=r, c=c)


def _lift(src: str, kernel: str):
    return lift(parse_source(src, "g.cu"), kernel)


@pytest.mark.parametrize("rc", [("ty", "tx"), ("row", "col")])
@pytest.mark.parametrize("ts", [16, 32])
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_zero_filled_tiles_lift_to_one_contraction(spelling: str, ts: int, rc: tuple) -> None:
    got = _lift(_square(SPELLINGS[spelling], ts, rc), "gemm")
    assert got.claimed and got.idiom == "contract", [d.message for d in got.diagnostics]
    assert len(got.intent.body) == 1
    text = to_text(got.intent.body[0], locs=False)
    assert "= reduce(add, k < inner: P[i, k] * Q[k, j]; acc float32) for i < rows" in text, text


def test_rectangular_tiles_loaded_by_part_of_the_block_lift() -> None:
    got = _lift(RECT, "rect")
    assert got.claimed and got.idiom == "contract", [d.message for d in got.diagnostics]


@pytest.mark.parametrize("loads", [STALE_ROWS, NO_FILL], ids=["stale_rows", "no_fill"])
def test_tiles_left_stale_in_a_k_step_are_still_refused(loads: str) -> None:
    got = _lift(_square(loads, 16), "gemm")
    assert not got.claimed
    assert any(d.code == "C2N2012" and "recurrence" in d.message for d in got.diagnostics)


def _cmp(a: str, b: str) -> af.Cond:
    return af.Cond.of(af.compare("<", af.sym(a), af.sym(b)))


def test_follows_by_unit_propagation() -> None:
    a, b = _cmp("i", "M"), _cmp("k", "K")
    both = af.conj([a, b])
    assert follows(both, (both.negate(),))  # else of one guard
    assert follows(both.negate(), (both,))  # the zero first, the load second
    assert follows(both, (a.negate(), af.conj([a, b.negate()])))  # nested ifs
    assert not follows(both, (a.negate(),))  # k >= K left uncovered
    assert not follows(both, ())
    assert follows(b, (both.negate(),))  # a part of the guard the else leaves out
    assert not follows(b, (a.negate(),))  # i < M does not give k < K
    assert follows(af.disj([a.negate(), b]), (a.negate(), b.negate()))


_TOML = """kernel = "{kernel}"
[launch]
grid = ["ceil_div(cols, {bn})", "ceil_div(rows, {bm})"]
block = [{bn}, {bm}]
[params]
P = {{ shape = ["rows", "inner"], dtype = "float32", role = "in" }}
Q = {{ shape = ["inner", "cols"], dtype = "float32", role = "in" }}
R = {{ shape = ["rows", "cols"], dtype = "float32", role = "out" }}
rows = 64
cols = 64
inner = 64
[[check.shapes]]
rows = 40
cols = 70
inner = 50
[[check.shapes]]
rows = 33
cols = 17
inner = 130
"""


def _write(tmp_path: Path, stem: str, src: str, kernel: str, bm: int, bn: int) -> Path:
    cu = tmp_path / f"{stem}.cu"
    cu.write_text(src)
    cu.with_suffix(".toml").write_text(_TOML.format(kernel=kernel, bm=bm, bn=bn))
    return cu


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("stem", "ts"), [("if_else", 32), ("nested", 16), ("negated", 16), ("rect", 0)]
)
def test_zero_filled_tile_ports_match_the_cuda_kernel(
    stem: str, ts: int, target: str, tmp_path: Path
) -> None:
    if stem == "rect":
        cu = _write(tmp_path, stem, RECT, "rect", 16, 32)
    else:
        cu = _write(tmp_path, stem, _square(SPELLINGS[stem], ts), "gemm", ts, ts)
    out = check_kernel(cu, target, tmp_path, max_points=3)
    assert out.status == "match" and out.idiom == "contract", out
    assert len(out.shapes) == 3
