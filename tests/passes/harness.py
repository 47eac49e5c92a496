"""Port an intent kernel, write it to a file, run it in the NKI simulator (shared test helper)."""

from __future__ import annotations

import importlib

import numpy as np

from cuda2nki.pipeline import port_intent


def verifier():
    """The IR verifier run after every pass (None until the IR package provides one)."""
    try:
        mod = importlib.import_module("cuda2nki.ir.verify")
    except ImportError:
        return None
    return getattr(mod, "verify", None)


def after_each_verify(p, kernel) -> None:
    verify = verifier()
    if verify is None:
        return
    problems = verify(kernel)
    assert not problems, f"verifier after {p.name}: {problems}"


def port(intent, tmp_path, target: str = "nki", passes: str | None = None):
    scheduled, src, diags = port_intent(
        intent, target=target, passes=passes, after_each=after_each_verify
    )
    path = tmp_path / f"{intent.name}_{target}.py"
    path.write_text(src)
    return path, src, scheduled, diags


def simulate(path, name: str, inputs: dict, **kw) -> object:
    from cuda2nki.nkisim.importer import load_kernel
    from cuda2nki.nkisim.kernel import simulate_kernel

    fn = load_kernel(path, name)
    return simulate_kernel(fn, {**inputs, **kw}).outputs


def close(out, ref, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(
        np.asarray(out, np.float64), np.asarray(ref, np.float64), rtol=rtol, atol=atol
    )
