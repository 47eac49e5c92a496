"""A uniform shift or bit operation used as an operand of a sum in the literal lowering keeps
its C grouping: ``i += (1 << LOG)`` (a macro's parentheses, which the parse does not keep) is
``i + (1 << LOG)``, not Python's ``(i + 1) << LOG``; so is a bit mask added to an offset."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel, _matches

# a running sum per thread over elements a power of two apart
STRIDED = """
#define LOG_GAP 7
#define GAP (1 << LOG_GAP)
__global__ void strided_runs(unsigned int* vals, unsigned int* ends, int rounds, int lg) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int len = rounds * GAP;
    int acc = 0;
    for (int i = t; i < len; i += STEP) {
        int v = vals[i];
        vals[i] = acc;
        acc += v;
    }
    ends[t] = acc + (lg & 3);
}
"""

PARAMS = (
    'vals = { shape = ["rounds * 128"], dtype = "uint32", role = "inout", range = [0, 1000] }\n'
    'ends = { shape = [128], dtype = "uint32", role = "out" }\n'
    "rounds = 5\n"
    "lg = 7"
)


@pytest.mark.parametrize("step", ["GAP", "1 << lg"], ids=["macro", "parameter"])
def test_a_shift_step_keeps_its_grouping(tmp_path, step: str) -> None:
    cu = _kernel(
        tmp_path, STRIDED.replace("STEP", step), "strided_runs", "2", "64", PARAMS, ["rounds = 3"]
    )
    _matches(cu, tmp_path)
