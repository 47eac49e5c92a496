"""The work for one CUDA file of a migration: parse once, then examine or port each kernel.

Runs inside a pool worker (see :mod:`cuda2nki.batch.pool`), so it returns plain data and writes
its ports itself (atomically).  File-level problems (unreadable, not UTF-8, preprocessor failure)
become one ``failed`` record; a kernel the front end refuses is ``refused``; one no recogniser
claims is ``literal`` (generic lowering) or ``manual`` (no port possible).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuda2nki.batch import checksizes
from cuda2nki.diagnostics import Diagnostic, DiagnosticError, Severity, SourceLoc, make
from cuda2nki.fileio import read_regular
from cuda2nki.frontend.deps import noted

#: effort buckets of the census, in report order
BUCKETS = ("automatic", "literal", "manual", "refused", "failed")


@dataclass(frozen=True)
class JobSpec:
    path: str
    rel: str
    out_dir: str
    mode: str  # "port" | "examine"
    target: str = "nki"
    check: bool = False
    defines: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[str, ...] = ()
    binding: str | None = None
    #: the file's time limit (the pool stops the worker past it); checks share what is left
    time_limit: float | None = None
    #: where each kernel's record is appended as soon as it is decided (see :class:`Journal`),
    #: so that a file stopped at its time limit keeps the records of its finished kernels
    journal: str | None = None
    #: the migrated tree and its globs: a kernel defined in another file of the tree (a header
    #: the file includes) is that file's record, not this one's
    root: str | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def counted_elsewhere(self, file: str) -> bool:
        from cuda2nki.batch.discover import selected

        if self.root is None or not file or os.path.realpath(file) == os.path.realpath(self.path):
            return False
        return selected(self.root, file, self.include, self.exclude)


_WARM_CU = """__global__ void warm_add(float* out, const float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + 1.0f;
}
"""
_WARM_TOML = """kernel = "warm_add"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
out = { shape = ["n"], dtype = "float32", role = "out" }
a = { shape = ["n"], dtype = "float32", role = "in" }
n = 256
"""
_warmed = False


def warm_up() -> None:
    """Port one tiny kernel so that the pipeline's modules are imported and its parsers and
    templates built in this process: workers forked afterwards share them instead of each
    paying for it (about 0.3 s of CPU per process).  Best effort: a failure here is ignored."""
    global _warmed
    if _warmed:
        return
    _warmed = True
    import tempfile

    try:
        with tempfile.TemporaryDirectory(prefix="cuda2nki-warm-") as tmp:
            cu, toml = Path(tmp) / "warm.cu", Path(tmp) / "warm.toml"
            cu.write_text(_WARM_CU)
            toml.write_text(_WARM_TOML)
            process_file(
                JobSpec(str(cu), "warm.cu", str(Path(tmp) / "out"), "port", binding=str(toml))
            )
    except Exception:  # noqa: BLE001, S110 - only an optimisation
        pass


def port_path(out_dir: str | Path, rel: str, kernel: str) -> Path:
    """Where the port of ``kernel`` from ``rel`` goes: ``OUT/<rel without suffix>/<kernel>.py``."""
    stem = rel.rsplit(".", 1)[0]
    return Path(out_dir) / stem / f"{kernel}.py"


@dataclass(frozen=True)
class FileResult:
    """The records of one file and the time each kernel took (kept apart: records are cached and
    reported deterministically, times are not)."""

    records: list[dict[str, Any]]
    kernel_seconds: dict[str, float] = field(default_factory=dict)
    #: the other files the records were computed from (headers, linked and including files)
    deps: tuple[str, ...] = ()


class Journal:
    """The records of one file, appended to a JSON-lines file as each is decided: first the
    names of the file's kernels (once it is parsed), then each kernel's record (a ported kernel
    under --check twice: once ported, once checked).  The worker is killed outright at the file's
    time limit; what the journal holds by then is what :func:`salvage` recovers."""

    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        self._write("w", None)  # a journal left by an earlier, interrupted run is dropped

    def kernels(self, names: list[str]) -> None:
        self._write("a", {"kernels": names})

    def deps(self, paths: tuple[str, ...]) -> None:
        """The other files the file's records are computed from, so far (after the parse, then
        after each kernel, whose inference may read more)."""
        self._write("a", {"deps": list(paths)})

    def add(self, rec: dict[str, Any]) -> None:
        """The kernel's final record."""
        self._write("a", {"record": rec})

    def ported(self, rec: dict[str, Any]) -> None:
        """The record of a kernel ported and about to be checked."""
        self._write("a", {"ported": rec})

    def _write(self, mode: str, entry: dict[str, Any] | None) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open(mode, encoding="utf-8") as f:
                if entry is not None:
                    f.write(json.dumps(entry) + "\n")
        except (OSError, TypeError, ValueError):  # best effort: the journal only saves work
            self.path = None


@dataclass(frozen=True)
class JournalEntry:
    record: dict[str, Any]
    final: bool  # False: ported, its check not finished


def read_journal(path: str | Path) -> tuple[list[str] | None, dict[str, JournalEntry]]:
    """The kernel names of a journal (None: the file was not parsed yet) and the latest entry
    of each kernel it holds.  A torn last line is ignored."""
    names: list[str] | None = None
    recs: dict[str, JournalEntry] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None, {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("kernels"), list):
            names = [str(n) for n in entry["kernels"]]
            continue
        for kind in ("record", "ported"):
            rec = entry.get(kind) if isinstance(entry, dict) else None
            if isinstance(rec, dict):
                recs[str(rec.get("kernel", ""))] = JournalEntry(rec, kind == "record")
    return names, recs


def journal_deps(path: str | Path) -> tuple[str, ...]:
    """The dependencies a journal holds (see :meth:`Journal.deps`); none when it has none."""
    out: set[str] = set()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return ()
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("deps"), list):
            out.update(str(p) for p in entry["deps"])
    return tuple(sorted(out))


def process_file(spec: JobSpec) -> FileResult:
    from cuda2nki.frontend.deps import recording
    from cuda2nki.frontend.headers import searching_tree
    from cuda2nki.frontend.remember import remembering_parses

    # outside any repository, a header missing from the include path is looked for in the
    # whole migrated tree (see frontend.headers); the checks reuse the port's parse of the file
    with searching_tree(spec.root), recording(), remembering_parses():
        res = _process_file(spec)
        return dataclasses.replace(res, deps=_others(spec))


def defines_kernel(path: str, name: str) -> bool:
    """Whether the file ``path`` itself holds the definition of the kernel ``name`` (a kernel
    refused for a device function of another file is still this file's)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    short = re.escape(name.split("::")[-1].split("<")[0])
    return re.search(rf"__global__\b[^;{{}}]*?\b{short}\s*\(", text) is not None


def _others(spec: JobSpec) -> tuple[str, ...]:
    """The files noted as read for ``spec``'s file, less the file itself."""
    me = os.path.realpath(spec.path)
    return tuple(p for p in noted() if p != me)


def _process_file(spec: JobSpec) -> FileResult:
    from cuda2nki import api
    from cuda2nki.binding import load_bindings
    from cuda2nki.frontend.scope import owners

    journal = Journal(spec.journal)
    try:
        tu = api.parse(spec.path, defines=dict(spec.defines), include_dirs=spec.include_dirs)
        sidecar = load_bindings(spec.binding) if spec.binding else None
    except DiagnosticError as exc:
        return FileResult([record(spec, "", "failed", exc.diagnostics, lines=0)])
    lines = _count_lines(spec.path)
    owned = owners(tu)  # which kernels each of the file's diagnostics concerns
    kernels = [k for k in tu.kernels if not spec.counted_elsewhere(k.loc.file)]
    rejected = {
        name: diags
        for name, diags in sorted(tu.rejected.items())
        if not any(spec.counted_elsewhere(d.loc.file) for d in diags[:1])
        or defines_kernel(spec.path, name)  # refused for code in a file it calls into
    }
    journal.kernels([*rejected, *(k.name for k in kernels)])
    journal.deps(_others(spec))
    records = [
        record(spec, name, "refused", _scoped(tu, name, diags, owned), lines=0)
        for name, diags in rejected.items()
    ]
    for rec in records:
        journal.add(rec)
    seconds: dict[str, float] = {}
    clock = _Budget(spec.time_limit, len(kernels))
    # every kernel is ported first, then the ports are checked: a file stopped during its
    # checks has decided every kernel's bucket (what --examine reports), whatever the machine
    checks: list[_Pending] = []
    small = {}
    if spec.check and spec.mode != "examine":
        small = checksizes.smaller_sizes(spec, tu=tu)
    for k in kernels:
        # a sidecar's binding applies to the kernel it names only; the others are inferred
        kb = sidecar.for_kernel(k.name, tu) if sidecar is not None else None
        t0 = time.perf_counter()
        rec = _kernel(spec, tu, k.name, kb, _kernel_lines(k), owned, checks, journal, small)
        if not checks or checks[-1].rec is not rec:
            journal.add(rec)
        records.append(rec)
        seconds[k.name] = time.perf_counter() - t0
        journal.deps(_others(spec))  # with those its inference read (callers elsewhere)
    clock.left = max(1, len(checks))
    for c in checks:
        t0 = time.perf_counter()
        _run_check(spec, c, clock.share())
        journal.add(c.rec)
        seconds[c.name] += time.perf_counter() - t0
        clock.done()
        if c.sizes:
            checksizes.discard(c)
    if not records:  # a file without kernels still counts as examined, unless it failed
        # an error in a header the tree counts on its own is that header's, not this file's
        own = [d for d in tu.diagnostics if not spec.counted_elsewhere(d.loc.file)]
        status = "failed" if _has_error(own) else "none"
        records.append(record(spec, "", status, own, lines=lines))
    return FileResult(records, seconds)


class _Budget:
    """The time a file's checks may take: what is left of its limit (less a margin for writing
    the records), shared evenly among the kernels still to do, so that one slow check ends in
    its own timeout (C2N4015 for the port; C2N0006, unverified, for the CUDA kernel's runs in
    the interpreter) instead of the pool stopping the whole file."""

    def __init__(self, limit: float | None, kernels: int) -> None:
        self.end = None if limit is None else time.monotonic() + 0.85 * limit - 1.0
        self.left = max(1, kernels)

    def done(self) -> None:
        self.left = max(1, self.left - 1)

    def share(self) -> float | None:
        """Seconds for the next check; None: no limit."""
        if self.end is None:
            return None
        return (self.end - time.monotonic()) / self.left


#: a check given less than this is not started (its port is reported unchecked)
_MIN_CHECK_SECONDS = 2.0


def _scoped(tu: Any, name: str, diags: Any, owned: Any) -> list[Diagnostic]:
    """What a kernel's record reports: the file's diagnostics that concern it (a missing include,
    say) and ``diags``, without those about the file's other kernels (they have their own).
    ``owned``: :func:`cuda2nki.frontend.scope.owners` of ``tu``."""
    from cuda2nki.frontend.scope import for_kernel

    diags = [*tu.diagnostics, *(d for d in diags if isinstance(d, Diagnostic))]
    return list(dict.fromkeys(for_kernel(tu, name, diags, others="drop", owned=owned)))


@dataclass(frozen=True)
class _Pending:
    """A port written and not checked yet: its record (completed by the check), the port's
    path and the binding it was made from."""

    rec: dict[str, Any]
    name: str
    port: Path
    binding: Any
    #: the size macros' smaller values the checked port was made with (see ``checksizes``)
    sizes: Mapping[str, str] = field(default_factory=dict)


def _run_check(spec: JobSpec, c: _Pending, share: float | None) -> None:
    """Check a port within ``share`` seconds (None: no limit), its outcome into its record; a
    share below :data:`_MIN_CHECK_SECONDS` leaves the port unchecked."""
    if share is not None and share < _MIN_CHECK_SECONDS:
        return
    got = _check(spec, c.port, c.binding, c.name, share, c.sizes)
    # a check that could not run says why among the kernel's diagnostics
    errors = record(spec, c.name, c.rec["status"], got.pop("errors", ()), lines=0)
    c.rec.update(got, diagnostics=[*c.rec["diagnostics"], *errors["diagnostics"]])
    if got["check_ids"] == ["C2N0006"]:  # stopped at its time, as a stopped file's checks are
        c.rec["blocking"] = sorted({*c.rec["blocking"], "C2N0006"})


def _kernel(
    spec: JobSpec,
    tu: Any,
    name: str,
    binding: Any,
    lines: int,
    owned: Any,
    checks: list[_Pending] | None = None,
    journal: Journal | None = None,
    small: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The record of one kernel: ported (or examined); under --check its port joins
    ``checks``, to be checked once every kernel of the file is ported (checked here when
    ``checks`` is None)."""
    from cuda2nki import api

    try:
        # --examine is a dry run of the same pipeline: the same buckets, nothing written
        res = api.port(
            spec.path,
            binding=binding,
            kernel=name,
            api=spec.target,
            defines=dict(spec.defines),
            include_dirs=spec.include_dirs,
        )
    except DiagnosticError as exc:  # no port: nothing is written
        diags = _scoped(tu, name, exc.diagnostics, owned)
        return record(spec, name, "manual", diags, lines=lines, missing=_missing(diags))
    diags = _scoped(tu, name, res.diagnostics, owned)
    if res.source is None:
        return record(spec, name, "manual", diags, lines=lines, idiom=res.idiom)
    bucket = "literal" if res.literal else "automatic"
    origin = "sidecar"
    if binding is None:  # the port was made from the inferred binding: its notes say how
        origin = "inferred"
        binding, notes = _inferred(spec, res.tu or tu, name)
        diags = [*diags, *(d for d in notes if d not in diags)]
    if spec.mode == "examine":
        return record(spec, name, bucket, diags, lines=lines, idiom=res.idiom, binding=origin)
    out = port_path(spec.out_dir, spec.rel, name)
    api.write_atomic(out, res.source)
    rec = record(
        spec,
        name,
        bucket,
        diags,
        lines=lines,
        idiom=res.idiom,
        port=str(out.relative_to(spec.out_dir)),
        binding=origin,
    )
    if spec.check:
        pending = _Pending(rec, name, out, binding)
        if small:  # the port checked is made again at the size macros' smaller values
            pending = checksizes.pending_at(spec, pending, small, rec)
        if journal is not None:  # ported: kept even if the check does not finish
            journal.ported(rec)
        if checks is None:
            _run_check(spec, pending, None)
        else:
            checks.append(pending)
    return rec


def _inferred(spec: JobSpec, tu: Any, name: str) -> tuple[Any, list[Diagnostic]]:
    """The binding a port without a sidecar entry was made from, and the inference's notes
    (which value each item got, and from where)."""
    from cuda2nki.pipeline import inferred_binding

    try:
        return inferred_binding(spec.path, tu, name)
    except DiagnosticError:  # the port inferred it; the check infers it again and reports why
        return None, []


def _missing(diags: list[Diagnostic]) -> list[str]:
    """The binding items inference could not supply (C2N2101), in words."""
    out = []
    for d in diags:
        if d.code == "C2N2101":
            what = d.message.removeprefix("cannot infer ").split(" for '")[0]
            out.append(what)
    return list(dict.fromkeys(out))


def _check(
    spec: JobSpec,
    port: Path,
    binding: Any,
    name: str,
    seconds: float | None = None,
    sizes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    from cuda2nki import api
    from cuda2nki.fidelity import smallsizes
    from cuda2nki.frontend.sizemacros import defines_win
    from cuda2nki.simt import deadline

    limit = {} if seconds is None else {"timeout": seconds}
    try:
        # the CUDA kernel's runs in this process end with the check's share of the time too
        with deadline.within(seconds), defines_win(sizes or {}):
            report = api.check(
                spec.path,
                str(port),
                binding=binding,
                kernel=name,
                seeds=2,
                **limit,
                defines={**dict(spec.defines), **dict(sizes or {})},
                include_dirs=spec.include_dirs,
                extra_points=checksizes.extra_points(binding, sizes),
            )
        if sizes:  # a size-bound performance finding at the check's sizes is a note
            report = smallsizes.at_chosen_sizes(report, sizes)
    except DiagnosticError as exc:
        return {
            "verdict": "error",
            "check_ids": sorted({d.code for d in exc.diagnostics}),
            "errors": list(exc.diagnostics),
        }
    except deadline.Overtime as exc:  # as if the file had stopped in it: the others go on
        why = f"the check of '{name}' {exc}, its share of the file's time limit"
        return {
            "verdict": "unverified",
            "check_ids": ["C2N0006"],
            "errors": [make("C2N0006", SourceLoc(spec.rel, 0, 0), reason=why)],
        }
    return {
        "verdict": report.verdict,
        "cost_us": report.cost_us,
        "numerics": report.numerics_outcome,
        # what made the verdict: every finding above a note (a numeric mismatch is in numerics)
        "check_ids": sorted({d.code for d in report.findings if d.severity > Severity.NOTE}),
    }


def record(
    spec: JobSpec,
    kernel: str,
    bucket: str,
    diags: Any,
    *,
    lines: int,
    idiom: str | None = None,
    port: str | None = None,
    missing: list[str] | None = None,
    binding: str | None = None,
) -> dict[str, Any]:
    """A kernel's record; ``binding``: where the binding of a port came from (``sidecar`` or
    ``inferred``, the inference's C2N2100 notes among the diagnostics), None without a port."""
    diags = [d for d in diags if isinstance(d, Diagnostic)]
    return {
        "file": spec.rel,
        "kernel": kernel,
        "status": bucket,
        "idiom": idiom,
        "port": port,
        "lines": lines,
        "diagnostics": [
            {
                "id": d.code,
                "severity": str(d.severity),
                "line": d.loc.line,
                "col": d.loc.col,
                "message": d.message,
                "notes": list(d.notes),
            }
            for d in diags
        ],
        "blocking": sorted({d.code for d in diags if d.severity >= Severity.ERROR}),
        "missing": missing or [],
        "binding": binding,
    }


def _has_error(diags: Any) -> bool:
    return any(isinstance(d, Diagnostic) and d.severity >= Severity.ERROR for d in diags)


def _count_lines(path: str) -> int:
    try:
        return read_regular(Path(path)).count(b"\n")
    except OSError:
        return 0


def _kernel_lines(fn: Any) -> int:
    end = getattr(fn.loc, "end_line", None) or fn.loc.line
    return max(1, end - fn.loc.line + 1)
