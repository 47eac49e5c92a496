"""Where a wrong output comes from: the port line and mechanism (literal re-runs of the CUDA kernel
and of port variants), and the CUDA threads and stores behind the mismatching elements.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cuda2nki.binding import Number, Resolved
from cuda2nki.diagnostics import DiagnosticError, SourceLoc
from cuda2nki.fidelity import outcap, points, portscan, rootcause
from cuda2nki.fidelity.check_bind import PortBinding, _match_outputs, _pyname
from cuda2nki.fidelity.check_reference import CudaSource, _reference
from cuda2nki.fidelity.compare import Comparison
from cuda2nki.fidelity.sandbox import PortSandbox
from cuda2nki.fidelity.tolerance import Tolerance

# --------------------------------------------------------------------------- port variants


class PortVariant:
    """The port with its text changed (one literal), run once in a sandbox of its own on one
    input set, for the root-cause tests; runs are remembered by (text, inputs)."""

    #: sandboxed re-runs one check may spend on variants (each starts a simulator)
    MAX_RUNS = 2

    def __init__(self, info: portscan.PortInfo, pb: PortBinding, like: PortSandbox) -> None:
        self.info, self.pb, self.like = info, pb, like
        self.memo: dict[tuple[Any, ...], dict[str, np.ndarray]] = {}
        #: the literal explanations found so far (a mechanism holds for the whole check)
        self.found: dict[str, rootcause.Mechanism] = {}

    def __call__(
        self,
        text: str,
        r: Resolved,
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, Number] | None = None,
    ) -> dict[str, np.ndarray]:
        """The port's outputs with its text ``text`` and its scalar arguments ``scalars``
        changed (port parameter -> value); ``{}`` when the run fails or the budget is spent."""
        key = (text, id(arrays), tuple(sorted((scalars or {}).items())))
        if key not in self.memo:
            if len(self.memo) >= self.MAX_RUNS:
                return {}
            self.memo[key] = self._run(text, r, arrays, scalars or {})
        return self.memo[key]

    def _run(
        self,
        text: str,
        r: Resolved,
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, Number],
    ) -> dict[str, np.ndarray]:
        import tempfile

        kwargs = {**points.port_kwargs(self.pb, r, dict(arrays)), **scalars}
        with tempfile.TemporaryDirectory(prefix="c2n-variant-") as d:
            path = Path(d) / Path(self.info.path).name
            path.write_text(text, encoding="utf-8")
            box = PortSandbox(
                str(path),
                self.info.kernel,
                [[kwargs]],
                target=self.like.target,
                timeout=self.like.timeout,
                memory_mb=self.like.memory_mb,
                profile_first=False,
                trust=self.like.trust,
                out_elements=[outcap.expected_elements(r)],
            )
            with box:
                res = box.result(0)
        if res.status != "ok" or not res.value or res.value[0].get("status") != "ok":
            return {}
        outs = _match_outputs(res.value[0]["outputs"], self.pb, self.info)
        return {k: v for k, v in outs.items() if v is not None}


def _root_cause(
    tu: Any,
    name: str,
    r: Resolved,
    entry: Mapping[str, Any],
    pb: PortBinding,
    cname: str,
    got: np.ndarray,
    expected: np.ndarray,
    tol: Tolerance,
    arrays: dict[str, np.ndarray],
    c: Comparison,
    loops: Mapping[int, tuple[str, ...]],
    source: CudaSource | None = None,
    port_text: str = "",
    variant: PortVariant | None = None,
) -> rootcause.Cause | None:
    """The port line, loop iteration and mechanism behind the wrong elements of ``cname``."""
    from cuda2nki.fidelity.compare import within

    writers = entry.get("writers")
    if writers is None:
        return None
    outs = entry.get("outputs")
    if isinstance(outs, Mapping):
        keys = list(outs)
        pname = cname if cname in keys else _pyname(cname)
        index = keys.index(pname) if pname in keys else -1
    else:
        index = pb.outputs.index(cname)
    e = np.asarray(expected, dtype=np.float64)
    g = np.asarray(got, dtype=np.float64)
    if index < 0 or g.size != e.size:
        return None
    g = g.reshape(e.shape)
    bad = ~within(g, e, tol.bound)
    cause = rootcause.localise(writers, index, bad, loops)
    if cause is None:
        return None

    def rerun(inputs: Mapping[str, np.ndarray]) -> np.ndarray | None:
        try:
            return _reference(tu, name, r, dict(inputs))[0][cname]
        except DiagnosticError:
            return None

    axis = c.evidence if c.defect == "wrong_axis" else ""
    bound = np.broadcast_to(np.asarray(tol.bound, dtype=np.float64), e.shape)
    extra = _literal_tests(
        source, port_text, name, r, arrays, cname, cause, g, e, bad, bound, variant
    )
    names = rootcause.name_reads(port_text)
    reads = {c: names.get(c, frozenset()) | names.get(_pyname(c), frozenset()) for c in arrays}
    acc = rootcause.accumulations(port_text)
    for n in acc.values():
        reads[n] = reads.get(n, frozenset()) | names.get(n, frozenset())
    return rootcause.diagnose(
        cause, writers, index, g, e, bad, bound, arrays, axis, rerun, extra, reads, acc
    )


def _literal_tests(
    source: CudaSource | None,
    port_text: str,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    cname: str,
    cause: rootcause.Cause,
    got: np.ndarray,
    expected: np.ndarray,
    bad: np.ndarray,
    bound: np.ndarray,
    variant: PortVariant | None,
) -> list[Any]:
    """The changed-constant and eps-misplaced tests: re-runs of the CUDA kernel re-parsed with
    one literal replaced, and of the port (``variant``) with eps changed (nothing when the CUDA
    text or the port's runner is unknown)."""
    from cuda2nki.fidelity import constants

    if source is None or not port_text or variant is None:
        return []
    src = source

    def rerun_port(eps: constants.Eps, value: float) -> np.ndarray | None:
        if eps.port_param:
            return variant(port_text, r, arrays, {eps.port_param: value}).get(cname)
        return variant(constants.port_replaced(port_text, eps.value, value), r, arrays).get(cname)

    scalars = {
        c: (p, float(r.scalars[c]))
        for p, c in variant.pb.scalars.items()
        if isinstance(r.scalars.get(c), float)
    }

    def rerun_source(text: str, rr: Resolved = r) -> np.ndarray | None:
        try:
            return _reference(src.parse(text), name, rr, dict(arrays))[0][cname]
        except Exception:  # noqa: BLE001 - a re-run that fails is a hypothesis not confirmed
            return None

    def rerun_cuda(eps: constants.Eps, value: float) -> np.ndarray | None:
        if eps.port_param:  # a scalar parameter: the same source at another value
            return rerun_source(
                src.text, dataclasses.replace(r, scalars={**r.scalars, eps.text: value})
            )
        return rerun_source(constants.replaced(src.text, eps.value, value))

    def remembered(kind: str, test: Callable[[], constants.Explanation | None]) -> Any:
        def run() -> rootcause.Mechanism | None:
            if kind not in variant.found:  # found once, it explains every point of the check
                x = test()
                if x is None:
                    return None
                variant.found[kind] = rootcause.Mechanism(x.name, x.line, x.evidence, x.advice)
            return variant.found[kind]

        return run

    return [
        remembered(
            "constant",
            lambda: constants.changed_constant(
                got, bound, src.text, port_text, rerun_source, dict(r.scalars)
            ),
        ),
        remembered(
            "eps",
            lambda: constants.eps_misplaced(
                got,
                bad,
                bound,
                src.text,
                port_text,
                cause.chain,
                constants.eps_candidates(src.text, port_text, scalars),
                rerun_port,
                rerun_cuda,
                expected,
            ),
        ),
    ]


def _stores(tu: Any, name: str, cname: str, cache: dict[str, Any]) -> list[SourceLoc]:
    from cuda2nki.fidelity.writers import store_locations

    key = f"stores:{cname}"
    if key not in cache:
        cache[key] = store_locations(tu, name, cname)
    return cache[key]


def _cuda_writers(
    tu: Any,
    name: str,
    r: Resolved,
    arrays: dict[str, np.ndarray],
    outputs: list[str],
    cname: str,
    got: np.ndarray,
    expected: np.ndarray,
    tol: Tolerance,
    cache: dict[str, Any],
    label: str,
) -> str:
    """The CUDA blocks/threads that wrote the mismatching elements (once per shape)."""
    from cuda2nki.fidelity.compare import within
    from cuda2nki.fidelity.writers import describe, writer_maps

    if label not in cache:
        cache[label] = writer_maps(tu, name, r, arrays, outputs)
    maps = cache[label]
    if not maps or cname not in maps:
        return ""
    e = np.asarray(expected, dtype=np.float64)
    if np.asarray(got).size != e.size:
        return ""
    bad = ~within(np.asarray(got, dtype=np.float64).reshape(e.shape), e, tol.bound)
    blocks, threads = maps[cname]
    return describe(blocks.reshape(e.shape), threads.reshape(e.shape), bad, r.grid)
