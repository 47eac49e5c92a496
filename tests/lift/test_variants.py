"""Each recogniser on several spellings of its idiom (see variants.py): the kernel is claimed,
tagged with the right idiom, and its intent IR evaluates to the NumPy meaning."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict, generate_inputs
from cuda2nki.frontend import parse_source
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.lift import lift_kernel

sys.path.insert(0, str(Path(__file__).parent))
from variants import VARIANTS  # noqa: E402


@pytest.mark.parametrize(
    ("vid", "src", "bdict", "idiom", "meaning"), VARIANTS, ids=[v[0] for v in VARIANTS]
)
def test_variant_lifts_to_its_meaning(vid, src, bdict, idiom, meaning) -> None:
    binding = binding_from_dict({"kernel": "k", **bdict}, path=f"<{vid}>")
    tu = parse_source(src, f"{vid.replace('/', '_')}.cu")
    res = lift_kernel(tu, "k", binding)
    assert res.claimed, [d.message for d in res.diagnostics]
    assert res.idiom == idiom
    for k, point in enumerate(binding.test_points()):
        resolved = binding.resolve(point)
        inputs = generate_inputs(resolved, seed=7 + k)
        got = evaluate(
            res.kernel_ir, {n: v.copy() for n, v in inputs.items()}, dict(resolved.scalars)
        )
        want = meaning(
            {n: v.astype(np.float64) if v.dtype.kind == "f" else v for n, v in inputs.items()},
            dict(resolved.scalars),
        )
        for name, ref in want.items():
            np.testing.assert_allclose(
                np.asarray(got[name], np.float64).reshape(np.shape(ref)),
                ref,
                rtol=1e-4,
                atol=1e-4,
                err_msg=f"{vid}:{name}",
            )


def test_at_least_three_spellings_per_family() -> None:
    fams = Counter(v[0].split("/")[0] for v in VARIANTS)
    assert all(n >= 3 for n in fams.values()), fams
