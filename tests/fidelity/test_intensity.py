"""What the checker reads from the lifted intent: multiply-adds per input element of a contraction
(C2N5002, contraction without the tensor engine, only where operand reuse makes the engine worth
it) and the tolerance of an index output (exact: an argmax cannot flip on shared inputs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import load_binding
from cuda2nki.fidelity.intensity import MIN_PE_REUSE, contraction_reuse
from cuda2nki.fidelity.tracefind import ProblemSize, TraceSummary, findings
from cuda2nki.frontend import parse_file
from cuda2nki.lift import lift_kernel
from tests.fidelity.corpus import lift_corpus

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _reuse(rel: str, **scalars: int) -> float | None:
    res, b = lift_corpus(rel)
    r = b.resolve(scalars)
    return contraction_reuse(res.kernel_ir, r.scalars, r.shapes)


@pytest.mark.parametrize(
    ("rel", "scalars", "low", "high"),
    [
        ("linalg/gemv", {}, 0.5, 1.01),  # A x: every matrix element used once
        ("linalg/gemv_transposed", {}, 0.5, 1.01),
        ("linalg/gesummv", {}, 0.2, 1.01),  # two matrix-vector products
        ("linalg/matmul_naive", {"M": 256, "N": 256, "K": 256}, 100, 200),  # 256^3 / (2 * 256^2)
    ],
)
def test_reuse_of_corpus_contractions(rel: str, scalars: dict, low: float, high: float) -> None:
    got = _reuse(rel, **scalars)
    assert got is not None and low <= got <= high, got


def test_maps_have_no_contraction() -> None:
    assert _reuse("basic/vector_add") is None


def _flags(pe_reuse: float | None) -> bool:
    s = TraceSummary(compute_count=64, compute_partitions=64 * 128, compute_elems=64 * 128 * 512)
    s.per_engine["vector"] = 64
    size = ProblemSize(4096, 1 << 16, 1 << 24, "contract", 1 << 22, 1.0, pe_reuse)
    return "C2N5002" in {d.code for d in findings(s, size, "p.py")}


def test_the_vector_engine_is_fine_for_a_bandwidth_bound_contraction() -> None:
    assert not _flags(1.0)
    assert _flags(MIN_PE_REUSE * 4)  # a matmul on the vector engine
    assert _flags(None)  # reuse unknown (kernel not lifted): judged as before


def _intent(rel: str):
    cu = CORPUS / f"{rel}.cu"
    b = load_binding(cu.with_suffix(".toml"))
    tu = parse_file(cu)
    res = lift_kernel(tu, b.kernel or tu.kernels[0].name, b)
    assert res.claimed, res.diagnostics
    return b, res.kernel_ir


def test_an_index_of_the_maximum_is_judged_exactly() -> None:
    """Both implementations read the same stored inputs: comparing an element with its own row's
    maximum cannot flip, so an argmax is compared exactly (not with a vacuous 2^31 bound); a float
    output keeps its input-rounding term (slack for another association order)."""
    from cuda2nki.binding import generate_inputs
    from cuda2nki.fidelity.tolerance import derived_tolerance

    b, intent = _intent("reduce/argmax_rows")
    r = b.resolve({})
    inputs = generate_inputs(r, seed=3)
    tol = derived_tolerance(intent, inputs, dict(r.scalars), "out_idx", "int32")
    assert tol is not None and float(np.max(tol.bound)) == 0.0
    b, intent = _intent("reduce/row_sum_tile")  # a sum still has its rounding bound
    r = b.resolve({})
    out = next(t.name for t in b.tensors if t.role == "out")
    tol = derived_tolerance(intent, generate_inputs(r, seed=3), dict(r.scalars), out, "float32")
    assert tol is not None and float(np.max(tol.bound)) > 0.0
