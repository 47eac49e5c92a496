"""split-rotations: a read (or write) at ``(i + c) mod n`` over ``i < n`` becomes two shifted
contiguous statements; what it leaves alone; circular shifts from CUDA port and check clean."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.nodes import Compute, Dyn, Mod
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from tests.port.acceptance import port_source

HEAD = "kernel k(x: in float32[n], y: out float32[n], n: int32, s: int32) {\n"


def _kernel(*stmts: str, head: str = HEAD):
    return parse(head + "".join(f"  gather: {s};\n" for s in stmts) + "}\n", "k.ir")


def _split(kernel):
    return run_pipeline(kernel, parse_pipeline("split-rotations"), PassContext())


ROTATIONS = [
    # np.roll with CUDA's hand-wrapped truncating remainder (the lifter's spelling)
    "y[i] = x[$(select(index((i - s) % n) < index(0), index((i - s) % n + n), index((i - s) % n)))] for i < n",
    # the double-modulo spelling, shift added
    "y[j] = x[(((j + s) % n) + n) % n] for j < n",
    # the rotation on the write side
    "y[(k + s) % n] = x[k] * 2.0 for k < n",
    # a constant shift written the other way round
    "y[i] = x[(3 + i) % n] + x[i] for i < n",
]


@pytest.mark.parametrize("stmt", ROTATIONS)
def test_rotations_become_two_shifted_pieces(stmt: str) -> None:
    before = _kernel(stmt)
    after = _split(before)
    assert len(after.body) == 2, to_text(after)
    for c in after.body:
        assert isinstance(c, Compute)
        for ix in (*c.target.index, *_read_indices(c)):
            assert not isinstance(ix, Dyn), to_text(c)
            assert c.domain.axes[0].name not in _mod_syms(ix), to_text(c)
    for n in (1, 7, 130):
        for s in (0, 3, -1, -n - 2, 2 * n + 5, n):
            if "(k + s)" in stmt and s < 0:
                continue  # C's % is negative there: the kernel would write out of bounds
            x = np.arange(n, dtype=np.float32) + 1
            want = evaluate(before, {"x": x}, {"n": n, "s": s})["y"]
            got = evaluate(after, {"x": x}, {"n": n, "s": s})["y"]
            np.testing.assert_array_equal(got, want, err_msg=f"n={n} s={s}")


def _read_indices(c: Compute) -> list:
    from cuda2nki.passes._analysis import walk

    out = []
    for e in walk(c.expr):
        out.extend(getattr(e, "index", ()) if type(e).__name__ == "Read" else ())
    return out


def _mod_syms(ix) -> set[str]:
    """Symbols under a modulo in ``ix``."""
    found: set[str] = set()
    if isinstance(ix, Mod):
        return set(ix.free_syms())
    for f in ("a", "b"):
        sub = getattr(ix, f, None)
        if sub is not None:
            found |= _mod_syms(sub)
    return found


LEFT_ALONE = [
    # the divisor is not the axis extent
    "y[i] = x[(i + s) % 5] for i < n",
    # the axis scaled: a permutation, not a rotation
    "y[i] = x[(2 * i + s) % n] for i < n",
    # a guard: not every element of the axis
    "y[i] = x[(i + s) % n] for i < n where i < s",
]


@pytest.mark.parametrize("stmt", LEFT_ALONE)
def test_other_modulo_indices_are_left_alone(stmt: str) -> None:
    before = _kernel(stmt)
    assert _split(before).body == before.body


# ---------------------------------------------------------------------- from CUDA, end to end

ROLL = """
__global__ void roll_1d(float* out, const float* in, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = (i - shift) % n;
        if (j < 0) j += n;
        out[i] = in[j];
    }
}
"""
ROLL_BINDING = """
kernel = "roll_1d"
[launch]
grid = ["ceil_div(n, 256)"]
block = [256]
[params]
out = { shape = ["n"], dtype = "float32", role = "out" }
in = { shape = ["n"], dtype = "float32", role = "in" }
n = 3000
shift = 17
[[check.shapes]]
n = 257
shift = -1000
[[check.shapes]]
n = 130
shift = 130
"""

ROTATE_LEFT = """
__global__ void rotate_left(const float* src, float* dst, int len, int k) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= len) return;
    dst[t] = 2.0f * src[((t + k) % len + len) % len];
}
"""
ROTATE_LEFT_BINDING = """
kernel = "rotate_left"
[launch]
grid = ["ceil_div(len, 128)"]
block = [128]
[params]
src = { shape = ["len"], dtype = "float32", role = "in" }
dst = { shape = ["len"], dtype = "float32", role = "out" }
len = 1000
k = 999
[[check.shapes]]
len = 129
k = -5
[[check.shapes]]
len = 70001
k = 3
"""

SHIFT_RIGHT = """
__global__ void shift_right(float* y, const float* x, int count, int by) {
    const int p = blockDim.x * blockIdx.x + threadIdx.x;
    if (p < count) y[p] = x[(p + count - by) % count] + 1.0f;
}
"""
SHIFT_RIGHT_BINDING = """
kernel = "shift_right"
[launch]
grid = ["ceil_div(count, 64)"]
block = [64]
[params]
y = { shape = ["count"], dtype = "float32", role = "out" }
x = { shape = ["count"], dtype = "float32", role = "in" }
count = 5000
by = 4999
[[check.shapes]]
count = 1
by = 0
[[check.shapes]]
count = 300
by = 300
"""

CASES = {
    "roll_1d": (ROLL, ROLL_BINDING),
    "rotate_left": (ROTATE_LEFT, ROTATE_LEFT_BINDING),
    "shift_right": (SHIFT_RIGHT, SHIFT_RIGHT_BINDING),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_circular_shifts_port_as_shifted_copies(tmp_path: Path, name: str, target: str) -> None:
    src, binding = CASES[name]
    done = port_source(tmp_path, name, src, binding, target=target, lowering="recognise")
    assert not done.res.literal, done.res.diagnostics
    report = check(done.cu, done.port, seeds=1)
    assert len(report.numerics) >= 3
    assert all(c["classification"] == "expected" for c in report.numerics), report.numerics
    assert report.verdict == "pass", [f"{d.code} {d.message}" for d in report.findings]
