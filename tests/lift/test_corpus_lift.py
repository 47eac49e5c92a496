"""Lift fidelity over the corpus: every kernel a recogniser claims computes, under the IR
evaluator, what the corpus NumPy reference computes, on every test shape of its binding.
Kernels that are not claimed must come back with a C2N2xxx diagnostic naming the construct."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import generate_inputs, load_binding
from cuda2nki.frontend import parse_file
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.lift import lift_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpus"))
from corpus_catalog import load_reference, runnable  # noqa: E402

ENTRIES = runnable()
#: a quick cross-section for the default test run; the whole corpus runs under -m slow
FAST = {
    "basic/vector_add",
    "basic/saxpy",
    "basic/scale_vec4",
    "basic/scale_shift_gridstride",
    "basic/add_bias_2d",
    "linalg/matmul_naive",
    "linalg/transpose_shared",
    "reduce/reduce_shared_tree",
    "reduce/column_sum",
    "linalg/gemv",
}


def _mode(kernel) -> str:
    """fp64, except for a kernel with an iteration whose exit depends on the data: how many
    steps an element takes to converge depends on the precision it is computed in, so such a
    kernel is evaluated in its declared dtypes (fp32, as the CUDA kernel runs)."""
    from cuda2nki.ir.nodes import Iterate
    from cuda2nki.rewrite import nodes

    return "declared" if any(isinstance(x, Iterate) for x in nodes(kernel.body)) else "fp64"


def check_entry(entry) -> tuple[bool, str]:
    binding = load_binding(entry.toml)
    tu = parse_file(entry.cu)
    kname = binding.kernel or tu.kernels[0].name
    res = lift_kernel(tu, kname, binding)
    if not res.claimed:
        assert res.kernel_ir is None and res.diagnostics
        assert all(d.code.startswith("C2N") for d in res.diagnostics)
        assert any(d.code.startswith(("C2N20", "C2N21", "C2N1")) for d in res.diagnostics)
        return False, res.diagnostics[-1].message
    for k, point in enumerate(binding.test_points()):
        resolved = binding.resolve(point)
        inputs = generate_inputs(resolved, seed=1000 + k)
        ref = load_reference(entry.ref)(
            {n: v.copy() for n, v in inputs.items()}, dict(resolved.scalars)
        )
        got = evaluate(
            res.kernel_ir,
            {n: v.copy() for n, v in inputs.items()},
            dict(resolved.scalars),
            mode=_mode(res.kernel_ir),
        )
        for t in binding.tensors:
            if t.role == "in":
                continue
            a = np.asarray(got[t.name], np.float64).reshape(-1)
            r = np.asarray(ref[t.name], np.float64).reshape(-1)
            scale = max(1.0, float(np.abs(r).max()) if r.size else 1.0)
            np.testing.assert_allclose(
                a,
                r,
                rtol=2e-3,
                atol=2e-3 * scale,
                err_msg=f"{entry.id}:{t.name} at {resolved.scalars}",
            )
    return True, res.idiom


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.id in FAST], ids=lambda e: e.id)
def test_lift_fidelity_fast(entry) -> None:
    claimed, _ = check_entry(entry)
    assert claimed, f"{entry.id} is expected to be claimed"


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_lift_fidelity_corpus(entry) -> None:
    check_entry(entry)
