"""The fp64 run of a CUDA kernel measures its own rounding error; the empirical tolerance uses it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuda2nki.binding import load_binding
from cuda2nki.fidelity.inputs import make_inputs
from cuda2nki.fidelity.oracle import promoted, run_fp64
from cuda2nki.fidelity.tolerance import empirical_tolerance
from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

ROOT = Path(__file__).resolve().parents[2]


def _types(node, acc):
    import dataclasses

    if isinstance(node, A.ScalarType):
        acc.add(node.name)
    elif isinstance(node, tuple):
        for n in node:
            _types(n, acc)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            _types(getattr(node, f.name), acc)
    return acc


def test_promotion_removes_every_fp32_type() -> None:
    tu = parse_file(ROOT / "corpus/norm/softmax_naive.cu")
    assert "float32" in _types(tu.functions, set())
    wide = promoted(tu)
    assert "float32" not in _types(wide.functions, set())
    assert "float64" in _types(wide.functions, set())


def test_fp64_run_is_closer_to_the_truth_than_fp32() -> None:
    cu = ROOT / "corpus/linalg/matmul_naive.cu"
    b = load_binding(cu.with_suffix(".toml"))
    r = b.resolve()
    tu = parse_file(cu)
    name = b.kernel or tu.kernels[0].name
    arrays = make_inputs(r, 1)  # special values: cancellation and large magnitudes
    out32 = run_kernel(tu, name, grid=r.grid, block=r.block, args={**r.scalars, **arrays})
    out64 = run_fp64(promoted(tu), name, r, arrays)
    assert out64 is not None
    ins = [t.name for t in b.tensors if t.role == "in"]
    a, bb = (arrays[n].astype(np.float64) for n in ins[:2])
    outn = next(t.name for t in b.tensors if t.role != "in")
    truth = (a @ bb).reshape(out64[outn].shape)
    err32 = np.abs(out32[outn].reshape(truth.shape) - truth).max()
    err64 = np.abs(out64[outn] - truth).max()
    assert err64 < err32 * 1e-3 or err32 == 0
    tol = empirical_tolerance(
        out32[outn], out64[outn], "float32", reduction_len=int(r.scalars.get("K", 1))
    )
    assert np.all(np.abs(out32[outn].reshape(truth.shape) - truth) <= tol.bound)
    assert tol.source == "fp64-run"


def test_without_the_ir_the_fallback_tolerance_says_so(monkeypatch) -> None:
    from cuda2nki.fidelity import check as chk

    monkeypatch.setattr(chk, "_intent", lambda tu, name, b: (None, None))
    root = Path(__file__).resolve().parents[2]
    rep = chk.check(
        root / "corpus/basic/vector_add.cu",
        root / "corpus/basic/ports/vector_add_port.py",
        seeds=1,
        overrides={"N": 1000},
        extra_points=False,
    )
    assert rep.verdict == "pass" and rep.tolerance_source == "fp64-run"
    notes = [d for d in rep.findings if d.code == "C2N4013"]
    assert len(notes) == 1 and "fp64-run" in notes[0].message
    assert notes[0].severity.name == "NOTE"
