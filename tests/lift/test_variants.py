"""Each recogniser on several spellings of its idiom (see variants.py): the kernel is claimed,
tagged with the right idiom, and its intent IR evaluates to the NumPy meaning."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from variants import VARIANTS, assert_lifts_to_meaning  # noqa: E402


@pytest.mark.parametrize(
    ("vid", "src", "bdict", "idiom", "meaning"), VARIANTS, ids=[v[0] for v in VARIANTS]
)
def test_variant_lifts_to_its_meaning(vid, src, bdict, idiom, meaning) -> None:
    assert_lifts_to_meaning(vid, src, bdict, idiom, meaning, seed0=7)


def test_at_least_three_spellings_per_family() -> None:
    fams = Counter(v[0].split("/")[0] for v in VARIANTS)
    assert all(n >= 3 for n in fams.values()), fams
