"""Every corpus kernel through the front end and the SIMT interpreter, against its reference.

Runnable kernels: on the default shape and on every ``[[check.shapes]]`` point, the interpreter's
out/inout tensors must match ``<kernel>_ref.py`` within the binding's tolerance.  Kernels marked
``expect = "refuse"`` must be rejected by the front end with the expected diagnostic id and line.
"""

from __future__ import annotations

import inspect
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from corpus_catalog import Entry, load_reference, refused, runnable


def _frontend() -> Any:
    mod = pytest.importorskip("cuda2nki.frontend", reason="frontend/simt not available yet")
    if not hasattr(mod, "parse_file"):
        pytest.skip("frontend/simt not available yet")
    return mod


def _simt() -> Any:
    mod = pytest.importorskip("cuda2nki.simt", reason="frontend/simt not available yet")
    if not hasattr(mod, "run_kernel"):
        pytest.skip("frontend/simt not available yet (cuda2nki.simt.run_kernel)")
    return mod


def _binding() -> Any:
    return pytest.importorskip("cuda2nki.binding", reason="cuda2nki.binding not available yet")


@cache
def _parse(path: Path) -> Any:
    return _frontend().parse_file(path)


def _cases() -> list[tuple[Entry, int]]:
    cases = []
    for e in runnable():
        n_points = 1 + len(e.data.get("check", {}).get("shapes", []))
        cases += [(e, i) for i in range(n_points)]
    return cases


CASES = _cases()


@pytest.mark.parametrize(("entry", "point"), CASES, ids=[f"{e.id}[{i}]" for e, i in CASES])
def test_simt_matches_reference(entry: Entry, point: int) -> None:
    simt, b = _simt(), _binding()
    binding = b.load_binding(entry.toml)
    tu = _parse(entry.cu)
    kernel = binding.kernel or tu.kernels[0].name
    assert tu.function(kernel) is not None, f"front end dropped {kernel}: {tu.rejected}"

    if entry.data.get("known_issue"):
        try:
            _check_point(simt, b, binding, tu, kernel, entry, point)
        except Exception:  # noqa: BLE001 - any failure is the documented gap
            _known_issue(entry)
        return
    _check_point(simt, b, binding, tu, kernel, entry, point)


def _check_point(
    simt: Any, b: Any, binding: Any, tu: Any, kernel: str, entry: Entry, point: int
) -> None:
    resolved = binding.resolve(binding.test_points()[point])
    inputs = b.generate_inputs(resolved, seed=1000 + point)
    args: dict[str, Any] = {k: v.copy() for k, v in inputs.items()}
    args.update(resolved.scalars)
    got = simt.run_kernel(
        tu,
        kernel,
        grid=resolved.grid,
        block=resolved.block,
        shared_bytes=resolved.shared_bytes,
        args=args,
    )
    expected = load_reference(entry.ref)(
        {k: v.copy() for k, v in inputs.items()}, dict(resolved.scalars)
    )

    for t in binding.tensors:
        if t.role == "in":
            continue
        out = np.asarray(got[t.name] if t.name in got else args[t.name])
        ref = np.asarray(expected[t.name])
        assert out.shape == ref.shape or out.size == ref.size, (t.name, out.shape, ref.shape)
        out = out.reshape(ref.shape)
        if t.np_dtype.kind in "iub":
            np.testing.assert_array_equal(
                out, ref, err_msg=f"{entry.id}:{t.name} at {resolved.scalars}"
            )
            continue
        rtol, atol = entry.tolerance(t.dtype)
        np.testing.assert_allclose(
            out.astype(np.float64),
            ref.astype(np.float64),
            rtol=rtol,
            atol=atol,
            err_msg=f"{entry.id}:{t.name} at {resolved.scalars}",
        )


def _known_issue(entry: Entry) -> None:
    """``known_issue = "..."`` in a binding marks a gap in the tool (not in the kernel): the test
    is expected to fail until the gap is fixed."""
    reason = entry.data.get("known_issue")
    if reason:
        pytest.xfail(f"known issue: {reason}")


@pytest.mark.parametrize("entry", refused(), ids=[e.id for e in refused()])
def test_front_end_refuses(entry: Entry) -> None:
    tu = _parse(entry.cu)
    if entry.data["expect_id"] not in [d.code for d in tu.rejected.get(entry.data["kernel"], ())]:
        _known_issue(entry)
    kernel = entry.data["kernel"]
    assert kernel not in {k.name for k in tu.kernels}, f"{kernel} was accepted"
    diags = tu.rejected.get(kernel, ())
    codes = [d.code for d in diags]
    assert entry.data["expect_id"] in codes, (kernel, codes, tu.diagnostics)
    line = entry.data.get("expect_line")
    if line is not None:
        hit = [d for d in diags if d.code == entry.data["expect_id"]]
        assert any(d.loc.line == line and Path(d.loc.file).name == entry.cu.name for d in hit), [
            str(d.loc) for d in hit
        ]


@pytest.mark.parametrize("entry", runnable(), ids=[e.id for e in runnable()])
def test_simt_generic_path_matches_reference(entry: Entry) -> None:
    """The interpreter's general (non-specialised) execution path agrees with the reference too,
    on the first ragged test point, so the fast path cannot hide a bug in the general one."""
    simt, b = _simt(), _binding()
    full = simt.run_kernel_full
    assert "fast" in inspect.signature(full).parameters, "no switch for the general path"
    binding = b.load_binding(entry.toml)
    tu = _parse(entry.cu)
    kernel = binding.kernel or tu.kernels[0].name
    resolved = binding.resolve(binding.test_points()[1])
    inputs = b.generate_inputs(resolved, seed=7)
    args: dict[str, Any] = {k: v.copy() for k, v in inputs.items()}
    args.update(resolved.scalars)
    got = full(
        tu,
        kernel,
        grid=resolved.grid,
        block=resolved.block,
        shared_bytes=resolved.shared_bytes,
        args=args,
        fast=False,
    ).outputs
    expected = load_reference(entry.ref)(
        {k: v.copy() for k, v in inputs.items()}, dict(resolved.scalars)
    )
    for t in binding.tensors:
        if t.role == "in":
            continue
        out = np.asarray(got[t.name]).reshape(np.asarray(expected[t.name]).shape)
        rtol, atol = entry.tolerance(t.dtype)
        np.testing.assert_allclose(
            out.astype(np.float64),
            np.asarray(expected[t.name]).astype(np.float64),
            rtol=rtol,
            atol=atol,
            err_msg=f"{entry.id}:{t.name} at {resolved.scalars} (general path)",
        )
