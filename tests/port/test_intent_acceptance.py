"""Every intent idiom: port -> NKI simulator -> within the IR error bound of the fp64 evaluator,
three shape sets, both targets (see tests/port/intent_acceptance.py)."""

from __future__ import annotations

import pytest

from tests.ir.kernels import ALL, kernel
from tests.port.intent_acceptance import check

# deliberate refusals, each by name (C2N2501): no port that computes something else.  (The
# histogram's key, an integer remainder of data values, is an exact integer instruction: the
# engines' fp32 is exact only below 2^24, see passes/_ints.py.)
REFUSED = {"TRIANGULAR": "extent depends on the index"}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(ALL))
def test_intent_kernel(name, target, tmp_path) -> None:
    row = check(kernel(name), target, tmp_path)
    if name in REFUSED:
        assert row.status == "refused" and REFUSED[name] in row.detail, row
        return
    assert row.status == "match", row
    assert len(row.shapes) == 3
