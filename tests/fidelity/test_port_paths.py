"""Shapes that exercise the port (issue 20 §3): test points on both sides of every size threshold
written in the port, and a note naming the port's instruction blocks no test point executed."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.fidelity import inputs as fi
from cuda2nki.fidelity import pathscan, portscan
from cuda2nki.fidelity.check import bind_port, check
from cuda2nki.fidelity.points import port_bounds

ROOT = Path(__file__).resolve().parents[2]
NORM = ROOT / "corpus/norm"
SOFTMAX = NORM / "softmax_naive.cu"
FLAW = NORM / "ports/softmax_naive_flaw_large_batch.py"


def _kernel(src: str) -> tuple[ast.FunctionDef, ast.Module]:
    tree = ast.parse(textwrap.dedent(src))
    return portscan.find_kernel(tree, "port.py", None), tree


def _bounds(src: str) -> list[tuple[str, int | None, int]]:
    fn, tree = _kernel(src)
    return [(t.size.param, t.size.axis, t.boundary) for t in pathscan.thresholds(fn, tree)]


@pytest.mark.parametrize(
    ("test", "want"),
    [
        ("N >= 512", 512),
        ("N < 512", 512),
        ("512 <= N", 512),
        ("512 > N", 512),
        ("N > 511", 512),
        ("N <= 511", 512),
        ("N > BIG - 1", 512),
        ("N >= 4 * P", 512),
        ("N == 1", 1),
    ],
)
def test_threshold_spellings(test: str, want: int) -> None:
    src = f"""
    BIG = 512
    def k(x):
        N, C = x.shape
        P = nl.tile_size.pmax
        if {test}:
            pass
    """
    assert _bounds(src) == [("x", 0, want)]


def test_threshold_sizes_from_shape_index_scalar_and_while() -> None:
    src = """
    def k(a, b, n):
        cols = b.shape[1]
        while a.shape[0] > 128:
            pass
        if cols >= 1024 and n < 7:
            pass
        base = 0
        while base < cols:
            base += 1
    """
    assert _bounds(src) == [("a", 0, 129), ("b", 1, 1024), ("n", None, 7)]


@pytest.mark.parametrize(
    ("loop", "want"),
    [
        ("for i in range(N // 512):", [("x", 0, 512)]),
        ("for i in nl.affine_range(C // FS):", [("x", 1, 512)]),
        ("for i in range(1, N // P):", [("x", 0, 128)]),
        ("for i in nl.sequential_range(n // 4):", [("n", None, 4)]),
        ("for i in range(N):", []),  # a trip count of N: no boundary
        ("for i in range(0, N, 512):", []),  # a tile loop: runs from N = 1 on
    ],
)
def test_threshold_from_a_trip_count(loop: str, want: list) -> None:
    """A loop over ``size // constant`` runs its body only from that constant up."""
    src = f"""
    def k(x, n):
        N, C = x.shape
        P = nl.tile_size.pmax
        FS = 512
        {loop}
            pass
    """
    assert _bounds(src) == want


def test_no_threshold_from_locals_or_reassigned_constants() -> None:
    src = """
    def k(x):
        (N,) = x.shape
        T = 64
        T = 128
        rest = N - 3
        if rest >= 128 or N > T:
            pass
    """
    assert _bounds(src) == []


def _softmax():
    b = load_binding(SOFTMAX.with_suffix(".toml"))
    info, tree = portscan.scan(str(FLAW), FLAW.read_text())
    return b, info, tree


def test_port_threshold_adds_the_missing_side() -> None:
    b, info, tree = _softmax()
    fn = portscan.find_kernel(tree, info.path, info.kernel)
    bounds = port_bounds(b, bind_port(b, info, None), pathscan.thresholds(fn, tree))
    assert bounds == [("N", 512)]
    before = [p.values["N"] for p in fi.test_points(b)]
    assert max(before) < 512  # without the port's threshold no point reaches its large path
    after = fi.test_points(b, bounds=bounds)
    added = after[len(before) :]
    assert [p.values["N"] for p in added] == [512]
    assert all(p.generated for p in added)
    # a threshold both sides of which are already covered adds nothing
    assert len(fi.test_points(b, bounds=[("N", 100)])) == len(before)


def test_threshold_points_are_bounded_and_within_the_binding() -> None:
    b, _, _ = _softmax()
    n = len(fi.test_points(b))
    many = [("N", v) for v in (600, 700, 800, 900)] + [("C", 0), ("C", 1 << 40)]
    pts = fi.test_points(b, bounds=many)
    assert len(pts) - n == fi.MAX_THRESHOLD_POINTS
    # the lower side of a threshold at 1 would be size 0: no point
    assert len(fi.test_points(b, bounds=[("N", 1)])) == n


def test_large_batch_flaw_is_caught_at_the_derived_point() -> None:
    rep = check(SOFTMAX, FLAW, seeds=2)
    assert rep.verdict == "fail"
    bad = [n for n in rep.numerics if n["classification"] == "defect"]
    assert bad and all("N=512" in n["shape"] for n in bad)
    assert any(f.code in ("C2N4001", "C2N4004") for f in rep.findings)
    # the branch for N >= 512 ran: nothing is reported unexecuted
    assert not any(f.code == "C2N4026" for f in rep.findings)


def test_unexecuted_block_spans() -> None:
    src = """
    import nki.isa as nisa
    import nki.language as nl
    def k(x):
        t = nl.ndarray((1, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        if x.shape[0] > 9:
            y = nl.ndarray((1, 1), dtype=x.dtype, buffer=nl.sbuf)
            nisa.activation(
                dst=y, op=nl.exp, data=t
            )
            if x.shape[1] > 3:
                nisa.dma_copy(dst=x, src=y)
        else:
            z = 1
        return x
    """
    fn, tree = _kernel(src)
    assert pathscan.unexecuted(fn, tree, {6, 10, 13}) == []  # a continuation line counts
    assert pathscan.unexecuted(fn, tree, {6}) == [(8, 13)]
    assert pathscan.unexecuted(fn, tree, {6, 9}) == [(13, 13)]
    assert pathscan.describe([(8, 13), (20, 20)]) == "8-13, 20"


def test_check_names_port_lines_no_point_ran(tmp_path: Path) -> None:
    port = (ROOT / "corpus/basic/ports/vector_add_port.py").read_text()
    old = "        base += cnt\n"
    extra = (
        "        if N + 1 > (1 << 40):\n"
        "            nisa.tensor_tensor(dst=c_t, data1=a_t, data2=a_t, op=nl.add)\n"
    )
    p = tmp_path / "vector_add_port.py"
    p.write_text(port.replace(old, extra + old))
    line = p.read_text().splitlines().index(extra.splitlines()[1]) + 1
    rep = check(ROOT / "corpus/basic/vector_add.cu", p, seeds=1)
    notes = [f for f in rep.findings if f.code == "C2N4026"]
    assert rep.verdict == "pass"
    assert len(notes) == 1 and notes[0].loc.line == line
    assert f"line(s) {line} " in notes[0].message


def test_generated_points_run_smallest_first_and_stop_at_the_limit() -> None:
    """A port that issues many instructions per element at the points run so far (a literal,
    thread-by-thread port) is not run at a generated point where one run would pass the limit;
    a tiled port is."""
    from cuda2nki.fidelity.points import Pace, cheapest_generated_last

    b = load_binding(SOFTMAX.with_suffix(".toml"))
    plan = [(p, b.resolve(p.values), [], []) for p in fi.test_points(b)]
    ordered = cheapest_generated_last(plan)
    given = [p for p in ordered if not p[0].generated]
    made = [p for p in ordered if p[0].generated]
    assert ordered[: len(given)] == given and made
    sizes = [r.shapes["input"][0] * r.shapes["input"][1] for _, r, _, _ in made]
    assert sizes == sorted(sizes)
    small = given[0][1]  # 200 x 64 elements in, as many out
    big = b.resolve({**given[0][0].values, "N": 258, "C": 1032})
    literal = Pace(20_000)
    literal.ran(small, 20_000)  # ~0.8 instructions per element: a group per CUDA block
    assert literal.over(big) and literal.predicted[-1] > 20_000
    tiled = Pace(20_000)
    tiled.ran(small, 12)
    assert not tiled.over(big)
    tiny = b.resolve({**given[0][0].values, "N": 1, "C": 1})
    tiled.ran(tiny, 12)  # a size-1 point's fixed overhead says nothing of the port's pace
    assert not tiled.over(big)
