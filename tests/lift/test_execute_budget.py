"""Symbolic execution spends a bounded amount of work: a value that a shuffle re-bases on a
neighbouring lane at every step of an unrolled loop doubles in size per step, and such a kernel
is refused (C2N2015) after a fixed number of work units, never left to run for minutes.  The
budget counts work, not seconds, so the answer is the same on a loaded machine."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift import symbase
from cuda2nki.lift import values as V
from cuda2nki.lift.symexec import Refusal, execute

RING = """
__global__ void {name}(int* {buf}, int n) {{
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int best = {buf}[i];
    for (int s = 0; s < {steps}; {step}) {{
        int next = __shfl_sync(0xffffffff, best, {src});
        int cost = {buf}[(i + s) % n];
        if (next + cost < best) best = next + cost;
    }}
    {buf}[i] = best;
}}
"""

SPELLINGS = {
    "ring_plus_one": dict(name="ring_min", buf="vals", src="(lane + 1) & 31", step="s++"),
    "ring_minus_one": dict(name="relax", buf="dist", src="(lane + 31) % 32", step="++s"),
    "ring_xor": dict(name="swap_min", buf="w", src="lane ^ ((s & 3) + 1)", step="s += 1"),
}


def _kernel(spelling: str, steps: int):  # noqa: ANN202
    src = RING.format(steps=steps, **SPELLINGS[spelling])
    tu = parse_source(src, "ring.cu")
    return tu, tu.kernels[0]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_value_doubling_per_step_is_refused_within_the_budget(spelling: str) -> None:
    tu, fn = _kernel(spelling, 24)
    with pytest.raises(Refusal) as got:
        execute(tu, fn, (256, 1, 1))
    assert got.value.code == "C2N2015"
    assert "work budget" in got.value.fmt["what"]
    assert V.WORK[0] == float("inf")  # the budget is the execution's own


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_few_steps_of_the_same_loop_execute(spelling: str) -> None:
    tu, fn = _kernel(spelling, 3)
    prog = execute(tu, fn, (256, 1, 1))
    assert [s.tensor for s in prog.stores] == [SPELLINGS[spelling]["buf"]]


def test_the_budget_is_counted_in_work_units(monkeypatch) -> None:
    """With a budget too small for even a short loop, the same refusal: the limit is the
    count of units, which no machine's speed changes."""
    tu, fn = _kernel("ring_plus_one", 3)
    monkeypatch.setattr("cuda2nki.lift.symexec.EXECUTE_UNITS", 50)
    with pytest.raises(Refusal):
        execute(tu, fn, (256, 1, 1))
    assert symbase.EXECUTE_UNITS > 10 * 36_000  # well above the corpus's largest kernel
