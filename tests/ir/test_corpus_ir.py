"""Every corpus kernel the lifter claims: its intent and scheduled IR print, parse back equal
(locations included) and verify without errors.  Skipped while the lifter is unavailable."""

from __future__ import annotations

import importlib
import signal
from pathlib import Path

import pytest

from cuda2nki.diagnostics import DiagnosticError, Severity
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.ir.verify import verify

ROOT = Path(__file__).resolve().parents[2]
KERNELS = sorted(p for p in (ROOT / "corpus").glob("*/*.cu") if p.parent.name != "refuse")


PORT_SECONDS = 60


def _port(path: Path):
    lift = importlib.import_module("cuda2nki.lift")
    if not hasattr(lift, "lift_kernel"):
        pytest.skip("lifter not available")
    from cuda2nki.pipeline import port_file

    def hung(signum, frame):
        raise TimeoutError(f"porting {path.name} took more than {PORT_SECONDS} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(PORT_SECONDS)
    try:
        return port_file(path, emit="tiles")
    except DiagnosticError as exc:
        pytest.skip(f"not ported: {exc}")
    except TimeoutError as exc:
        pytest.fail(str(exc))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


#: kernels checked in the default run; the full corpus runs under ``-m slow``
SAMPLE = {"basic/vector_add", "linalg/matmul_tiled", "norm/softmax_naive", "reduce/column_sum"}


def _sampled(paths: list[Path]) -> list:
    out = []
    for p in paths:
        key = f"{p.parent.name}/{p.stem}"
        out.append(pytest.param(p, id=key, marks=() if key in SAMPLE else pytest.mark.slow))
    return out


@pytest.mark.parametrize("path", _sampled(KERNELS))
def test_corpus_ir_round_trips_and_verifies(path: Path) -> None:
    res = _port(path)
    if res.ir_intent is None:
        pytest.skip("refused by the lifter")
    for layer in (res.ir_intent, res.ir_tiles):
        if layer is None:
            continue
        text = to_text(layer)
        assert parse(text, str(path)) == layer, text
        errors = [d for d in verify(layer) if d.severity is Severity.ERROR]
        assert not errors, "\n".join(d.render() for d in errors) + "\n" + text


@pytest.mark.slow
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus_intent_matches_simt_within_the_ir_bound(path: Path) -> None:
    """Lift fidelity through the evaluator: SIMT outputs lie within c=2 of the fp64 oracle."""
    import numpy as np

    from cuda2nki import api
    from cuda2nki.binding import generate_inputs, load_binding
    from cuda2nki.ir.evaluate import analyse

    res = _port(path)
    if res.ir_intent is None or not path.with_suffix(".toml").is_file():
        pytest.skip("refused by the lifter, or no binding")
    binding = load_binding(path.with_suffix(".toml"))
    resolved = binding.resolve()
    arrays = generate_inputs(resolved, seed=0)
    simt = api.run(path, binding, inputs=arrays)
    k = res.ir_intent
    shaped = {}
    for t in k.params:
        if hasattr(t, "shape") and t.name in arrays:
            ir_shape = tuple(int(s.evaluate(resolved.scalars)) for s in t.shape)
            shaped[t.name] = np.asarray(arrays[t.name]).reshape(ir_shape)
    an = analyse(k, shaped, dict(resolved.scalars))
    for name, exact in an.values.items():
        got = np.asarray(simt[name], np.float64).reshape(exact.shape)
        with np.errstate(invalid="ignore"):
            diff = np.where(got == exact, 0.0, np.abs(got - exact))
        assert np.all(diff <= 2 * an.bound[name]), (name, float(np.max(diff)))
