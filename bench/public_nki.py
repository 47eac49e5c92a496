"""Run public NKI code that checks itself against NumPy on the simulator, and count the outcomes.

Not a benchmark of speed and not a test: the public repositories are not part of this project.
Point it at local git clones (any revisions) of the NKI samples repository and, optionally, of
the NKI library::

    python -m bench.public_nki --samples PATH/TO/nki-samples.git [--library PATH/TO/nki-library.git]
        [--revs REV,REV,...] [--every N] [--generation current|legacy] [--timeout S]
        [--clock cpu|wall] [--memory GIB] [--seen FILE] [--keys] [-v]

A history too long for one sitting can be split into runs over disjoint revision ranges: the
rows of ``--keys`` end with each case's key, and a later run given those keys in ``--seen`` leaves
out the cases already counted, so the runs add up to the counts of one run over all of them.

Cases, each run in a child process with ``nki`` and ``neuronxcc.nki`` bound to the simulator,
on a machine that reads as an instance of the simulated target (``simulated_host``):

* a tutorial file whose ``__main__`` block compares the kernel against NumPy, or a tutorial
  ``test_*.py`` that calls its test at module level (files that import torch or jax are left
  out), run as ``__main__``;
* each test of ``test/unit/test_*.py`` selected by its ``--simulation-only`` option (those marked
  as simulation tests), run through pytest (tests marked ``xfail`` upstream are no cases);
* with ``--library``, the import of each kernel module of the library (no goldens there: the
  library's references are torch code), counted on a line of its own; the torch references
  themselves (``*_torch.py`` and any other module that imports torch) are no cases.

A case is the content of its file and of the kernel sources it uses (the tutorial's folder, the
unit tests' reference kernels), so a case unchanged across the chosen revisions counts once.
Whatever the goldens import besides NumPy (scipy for some) must be importable: put it on
``PYTHONPATH``; a missing one counts as a crash.  The API generation is ``legacy`` when
the file (or the kernels it tests) imports ``neuronxcc``, else ``current``.  Outcomes:
``matched`` (ran and matched its golden), ``mismatch`` (an assertion failed), ``refused``
(C2N3001: a documented construct the simulator does not model), ``violation`` (another
simulator diagnostic: a hardware constraint), ``crash`` (any other exception, e.g. a missing
name), ``dependency`` (the import of a module outside ``nki`` / ``neuronxcc`` that this machine
lacks, e.g. scipy for a golden or torch through a helper: not the simulator's gap), ``timeout`` (past ``--timeout`` seconds of the child's CPU time, all threads, or with
``--clock wall`` of wall time), ``memory`` (past ``--memory`` GiB of address space: NumPy's
``MemoryError``, in the kernel or in its golden), ``broken`` (the public file does not compile: a ``SyntaxError``
upstream too).  A test that stops at the refusal of ``nki.benchmark`` times the kernel on a
device (the perf tests of revisions without a simulation marker): ``device``, listed and counted
apart, no case.  ``--generation`` keeps the cases of one API generation.
"""

from __future__ import annotations

import argparse
import builtins
import collections
import contextlib
import hashlib
import importlib.abc
import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import types
from pathlib import Path

MARK = "@@public_nki "

#: The outcome columns of the summary tables, in order.
COLUMNS = (
    "matched",
    "mismatch",
    "refused",
    "violation",
    "crash",
    "dependency",
    "timeout",
    "memory",
    "broken",
)


class CaseTimeout(BaseException):
    """Raised by the alarm when one case runs past its time limit."""


#: A test that stops at this refusal times the kernel on a device (a perf test of a revision
#: whose tests carry no simulation marker yet): outcome ``device``, listed but no case.
DEVICE_ONLY_API = "nki.benchmark"


def classify(exc: BaseException | None) -> tuple[str, str]:
    """``(outcome, detail)`` for the exception a case ended with (``None``: it passed)."""
    from cuda2nki.diagnostics import DiagnosticError

    if exc is None:
        return "matched", ""
    if isinstance(exc, CaseTimeout):
        return "timeout", ""
    if isinstance(exc, MemoryError):
        return "memory", str(exc)[:160]
    seen = set()
    while isinstance(exc, BaseException) and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DiagnosticError):
            d = exc.diagnostic
            text = str(exc)
            if d.code == "C2N3001" or "[C2N3001]" in text or "C2N3001" in d.message:
                if d.message.startswith(f"'{DEVICE_ONLY_API}'"):
                    return "device", d.message[:160]
                return "refused", d.message[:160]
            if d.code in ("C2N3023", "C2N3024"):
                return "crash", d.message[:160]
            return "violation", f"{d.code} {d.message[:150]}"
        if isinstance(exc, AssertionError):
            return "mismatch", str(exc)[:160]
        if isinstance(exc, SyntaxError):  # the public file itself does not compile
            return "broken", f"{type(exc).__name__}: {exc}"[:160]
        if _third_party_missing(exc):
            return "dependency", f"{type(exc).__name__}: {exc}"[:160]
        nxt = exc.__cause__ or exc.__context__
        if nxt is None:
            break
        exc = nxt
    return "crash", f"{type(exc).__name__}: {str(exc)[:150]}"


#: Top-level packages the simulator stands for: a missing module under one of them is a gap of
#: the simulator (a crash), not of the machine running the case.
SIMULATED_PACKAGES = frozenset({"nki", "neuronxcc"})


def _third_party_missing(exc: BaseException) -> bool:
    """``exc`` is the import of a module that is neither simulated nor present: a package the
    goldens or helpers need (scipy, torch) that the machine lacks."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return False
    return exc.name.split(".")[0] not in SIMULATED_PACKAGES


# --------------------------------------------------------------------------- child process


# Where code running on an instance reads what machine it is (the EC2 instance type, e.g.
# "trn2.48xlarge"; some public tests skip or pick a configuration from its first part).  In a
# child the machine is an instance of the simulated target, so these read as one.
HOST_FILES = ("/sys/devices/virtual/dmi/id/product_name",)
INSTANCE_TYPES = {"trn1": "trn1.32xlarge", "trn2": "trn2.48xlarge"}


def instance_type(target: str) -> str:
    """The instance type of a machine of the simulated ``target`` (its largest size)."""
    return INSTANCE_TYPES.get(target, f"{target}.48xlarge")


@contextlib.contextmanager
def simulated_host(target: str):
    """Inside the block, reading one of ``HOST_FILES`` gives the instance type of ``target``;
    every other file opens as usual."""
    text = instance_type(target) + "\n"
    real = builtins.open

    def open_(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.fspath(file) in HOST_FILES:
            if not set(mode) & set("wax+"):
                return io.BytesIO(text.encode()) if "b" in mode else io.StringIO(text)
        return real(file, mode, *args, **kwargs)

    builtins.open = io.open = open_
    try:
        yield
    finally:
        builtins.open = io.open = real


def _emit(name: str, exc: BaseException | None) -> None:
    outcome, detail = classify(exc)
    print(MARK + json.dumps({"name": name, "outcome": outcome, "detail": detail}), flush=True)


#: what a case's time limit counts: the process's CPU time (all threads, as the speed bench
#: judges), so that other work on a shared machine does not turn into timeouts, or wall time
CLOCKS = {"cpu": (signal.ITIMER_PROF, signal.SIGPROF), "wall": (signal.ITIMER_REAL, signal.SIGALRM)}
_CLOCK = ["cpu"]
#: with the CPU clock, how many times a child's wall-clock limit exceeds its CPU-time budget
WALL_BACKSTOP = 10


def _alarm(seconds: int):
    def handler(signum, frame):
        raise CaseTimeout()

    which, sig = CLOCKS[_CLOCK[0]]
    signal.signal(sig, handler)
    signal.setitimer(which, seconds)


def _disarm() -> None:
    signal.setitimer(CLOCKS[_CLOCK[0]][0], 0)


def _run_tutorial(path: Path, timeout: int) -> None:
    import runpy

    _alarm(timeout)
    try:
        runpy.run_path(str(path), run_name="__main__")
    except BaseException as exc:  # noqa: BLE001 - classified and reported
        _disarm()
        _emit(path.name, exc)
        return
    _disarm()
    _emit(path.name, None)


class _Collector:
    def __init__(self, timeout: int):
        self.timeout = timeout

    def pytest_runtest_call(self, item):
        _alarm(self.timeout)

    def pytest_runtest_makereport(self, item, call):
        if item.get_closest_marker("xfail") is not None:
            return  # expected to fail upstream: not a case
        if call.when != "call":
            if call.excinfo is not None and not call.excinfo.errisinstance(
                __import__("pytest").skip.Exception
            ):
                _emit(item.nodeid, call.excinfo.value)
            return
        _disarm()
        _emit(item.nodeid, call.excinfo.value if call.excinfo is not None else None)
        if call.excinfo is not None:
            _release(call.excinfo.tb)


def _release(tb) -> None:
    """Drop the locals of a failed test's frames (its inputs, its golden, the simulator's
    tensors): pytest keeps the traceback for its report, and a case that ran out of memory
    would otherwise leave the next cases of its file without any."""
    import gc
    import traceback

    traceback.clear_frames(tb)
    gc.collect()


def _run_unit(path: Path, timeout: int) -> None:
    import importlib.util

    import pytest

    spec = importlib.util.spec_from_file_location("_public_probe", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)  # import errors are one case, not zero
    except BaseException as exc:  # noqa: BLE001 - classified and reported
        _emit(f"{path.name}::<import>", exc)
        return
    conftest = path.parent / "conftest.py"
    only = (
        ["--simulation-only"]
        if conftest.is_file() and "simulation-only" in conftest.read_text()
        else []
    )
    pytest.main(
        [str(path), *only, "-q", "-p", "no:cacheprovider", "-o", "addopts="],
        plugins=[_Collector(timeout)],
    )


def _import_module(root: Path, path: Path, timeout: int) -> None:
    import importlib

    rel = path.relative_to(root).with_suffix("")
    name = ".".join(rel.parts)
    _alarm(timeout)
    try:
        importlib.import_module(name)
    except BaseException as exc:  # noqa: BLE001 - classified and reported
        _disarm()
        _emit(name, exc)
        return
    _disarm()
    _emit(name, None)


#: The legacy compiler's kernel library.  The samples repository documents its reference folder
#: as that library's source (README: "the source code of the ``neuronxcc.nki.kernels``"), and
#: its unit tests of 2024 import the kernels from the library: in a samples case the library is
#: the revision's reference folder (the simulator itself refuses the library's names).
KERNEL_LIBRARY = "neuronxcc.nki.kernels"


class _KernelLibraryFinder(importlib.abc.MetaPathFinder):
    """Finds ``neuronxcc.nki.kernels.<name>`` as ``<name>.py`` of the reference folder."""

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, fullname, path=None, target=None):
        head, _, name = fullname.rpartition(".")
        src = self.folder / f"{name}.py"
        if head == KERNEL_LIBRARY and src.is_file():
            return importlib.util.spec_from_file_location(fullname, src)
        return None


def _library_package(folder: Path) -> types.ModuleType:
    """``neuronxcc.nki.kernels`` over ``folder``: its submodules are the folder's modules, and a
    name asked of the package itself is looked up in them (the library exports its kernels at
    the top level too)."""
    pkg = types.ModuleType(KERNEL_LIBRARY)
    pkg.__path__ = [str(folder)]

    def getattr_(name: str):
        if not name.startswith("__"):
            for src in sorted(folder.glob("*.py")):
                if src.stem.startswith("_"):
                    continue
                mod = importlib.import_module(f"{KERNEL_LIBRARY}.{src.stem}")
                if hasattr(mod, name):
                    return getattr(mod, name)
        raise AttributeError(f"module {KERNEL_LIBRARY!r} has no attribute {name!r}")

    pkg.__getattr__ = getattr_
    return pkg


@contextlib.contextmanager
def kernel_library(folder: Path | None):
    """Inside the block (inside ``nki_namespace``), ``neuronxcc.nki.kernels`` is ``folder``'s
    modules; ``None``: left as the simulator has it."""
    if folder is None:
        yield
        return
    names = [n for n in sys.modules if n == KERNEL_LIBRARY or n.startswith(KERNEL_LIBRARY + ".")]
    saved = {n: sys.modules.pop(n) for n in names}
    parent = sys.modules.get("neuronxcc.nki")
    before = getattr(parent, "kernels", None) if parent is not None else None
    pkg = sys.modules[KERNEL_LIBRARY] = _library_package(folder)
    if parent is not None:
        parent.kernels = pkg
    finder = _KernelLibraryFinder(folder)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for n in [
            n for n in sys.modules if n == KERNEL_LIBRARY or n.startswith(KERNEL_LIBRARY + ".")
        ]:
            del sys.modules[n]
        sys.modules.update(saved)
        if parent is not None:
            parent.kernels = before


def _reference_folder(roots: list[str]) -> Path | None:
    """The reference kernels among a case's roots (a unit test's), if any."""
    for r in roots[1:]:
        if Path(r).name == "reference" and Path(r).is_dir():
            return Path(r)
    return None


#: the default cap: the largest public goldens (the samples' backward attention at 8 heads x
#: 8192, in NumPy) peak at 13 GB resident (17 GB with attention sinks) and pass under a 21 GiB
#: cap; the simulator stays near 0.5 GB on that case
DEFAULT_MEMORY_GIB = 22.0


def _cap_memory(gib: float) -> None:
    """Past ``gib`` GiB of address space an allocation fails with ``MemoryError`` (outcome
    ``memory``), so that one huge case cannot take the machine's memory."""
    import resource

    if gib > 0:
        cap = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


_TORCH_IMPORT = re.compile(r"^\s*(import|from)\s+torch\b", re.M)


def _is_torch_reference(mod: Path) -> bool:
    """A library module that is a torch reference, not a kernel: ``*_torch.py``, or a module
    that imports torch (the MX helpers shared by several references)."""
    return mod.stem.endswith("_torch") or bool(
        _TORCH_IMPORT.search(mod.read_text(errors="replace"))
    )


def child(
    kind: str, path: str, roots: list[str], timeout: int, clock: str = "cpu", memory: float = 0
) -> None:
    import numpy as np

    _CLOCK[0] = clock
    _cap_memory(memory)

    from cuda2nki.nkisim import nki_namespace

    np.random.seed(0)
    for r in reversed(roots):
        sys.path.insert(0, r)
    p = Path(path)
    sys.path.insert(0, str(p.parent))
    os.chdir(p.parent)
    sys.argv = [str(p)]
    from cuda2nki.nkisim.state import resolve_target

    with (
        nki_namespace(shadow=True),
        simulated_host(resolve_target().name),
        kernel_library(_reference_folder(roots) if kind != "library" else None),
    ):
        if kind == "tutorial":
            _run_tutorial(p, timeout)
        elif kind == "unit":
            _run_unit(p, timeout)
        else:
            for mod in sorted(p.rglob("*.py")):
                if mod.name != "__init__.py" and not _is_torch_reference(mod):
                    _import_module(Path(roots[0]), mod, timeout)


# --------------------------------------------------------------------------- parent process


def _git(gitdir: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True, text=True
    ).stdout


def _export(gitdir: str, rev: str, dest: Path, paths: tuple[str, ...] = ()) -> None:
    """Write revision ``rev`` into ``dest``; with ``paths``, only those of them that exist
    there (a partial clone may lack the blobs of the rest of a large tree)."""
    dest.mkdir(parents=True)
    keep = [
        p
        for p in paths
        if subprocess.run(
            ["git", f"--git-dir={gitdir}", "cat-file", "-e", f"{rev}:{p}"], capture_output=True
        ).returncode
        == 0
    ]
    if paths and not keep:
        return
    tar = subprocess.run(
        ["git", f"--git-dir={gitdir}", "archive", rev, *(["--", *keep] if keep else [])],
        check=True,
        capture_output=True,
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar.stdout, check=True)


def _digest(*paths: Path) -> str:
    h = hashlib.sha1()
    for p in paths:
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            h.update(f.read_bytes())
    return h.hexdigest()


_LEGACY_IMPORT = re.compile(r"^\s*(from|import)\s+neuronxcc\b", re.M)


def _generation(*paths: Path) -> str:
    for p in paths:
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        if any(_LEGACY_IMPORT.search(f.read_text(errors="replace")) for f in files):
            return "legacy"
    return "current"


def _spawn(
    kind: str,
    path: Path,
    roots: list[Path],
    timeout: int,
    limit: int,
    clock: str = "cpu",
    memory: float = 0,
) -> list[dict]:
    cmd = [sys.executable, "-m", "bench.public_nki", "--child", kind, str(path)]
    cmd += ["--timeout", str(timeout), "--clock", clock, "--memory", str(memory)]
    if clock == "cpu":
        limit *= WALL_BACKSTOP  # the child's CPU limits end a case; this ends a hung child
    for r in roots:
        cmd += ["--root", str(r)]
    # this project first; anything already on PYTHONPATH (e.g. what the goldens import) after
    path = [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))
    rc = None
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=limit, env=env, check=False
        )
        out, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
    # a row may follow pytest's progress dots on the same line
    rows = [
        json.loads(line[line.index(MARK) + len(MARK) :])
        for line in out.splitlines()
        if MARK in line
    ]
    if rows or rc == 0:  # a test file with no simulation test has no case
        return rows
    return [{"name": path.name, "outcome": "crash", "detail": f"child process ended ({rc})"}]


_MODULE_LEVEL_TEST = re.compile(r"^test_\w*\(", re.M)


_FRAMEWORK_IMPORT = re.compile(r"^\s*(import|from)\s+(torch|jax)\b", re.M)
_LOCAL_IMPORT = re.compile(r"^\s*(?:from\s+(\w+)\s+import|import\s+(\w+))", re.M)


def _local_imports(f: Path, text: str) -> list[Path]:
    """The modules of ``f``'s own folder that ``f`` imports (``from attention_kernels import
    *``)."""
    names = {a or b for a, b in _LOCAL_IMPORT.findall(text)}
    return [f.parent / f"{n}.py" for n in sorted(names) if (f.parent / f"{n}.py").is_file()]


def _is_tutorial_case(f: Path, text: str) -> bool:
    """A tutorial file that checks itself against NumPy when run: a ``__main__`` block that
    compares (``allclose`` / ``array_equal`` / ``assert``), or a ``test_*.py`` that calls its
    test at module level.  Files that need torch or jax (themselves, or through a module of
    their folder that they import) are left out."""
    if "nki" not in text or "import torch" in text or "import jax" in text:
        return False
    if any(
        _FRAMEWORK_IMPORT.search(m.read_text(errors="replace")) for m in _local_imports(f, text)
    ):
        return False  # a module of its own folder that it imports needs torch or jax
    if "__main__" in text:
        main_block = text[text.index("__main__") :]
        return bool(re.search(r"allclose|array_equal|assert", main_block))
    return f.name.startswith("test_") and bool(_MODULE_LEVEL_TEST.search(text))


def _imported(text: str, refs: list[Path]) -> list[Path]:
    """The reference kernel files a unit test imports (``reference.attention`` or, through the
    kernel library, ``neuronxcc.nki.kernels.attention`` -> ``attention.py``), with the helper
    packages (folders) next to them."""
    out = []
    for ref in refs:
        for f in sorted(ref.glob("*.py")):
            if re.search(rf"\b(reference|kernels)\.{re.escape(f.stem)}\b", text):
                out.append(f)
        out += sorted(d for d in ref.iterdir() if d.is_dir() and not d.name.startswith("_"))
    return out


def _sample_cases(tree: Path) -> list[tuple[str, Path, list[Path], str, str]]:
    """``(kind, path, roots, key, generation)`` of one exported revision of the samples (the
    2024 layout has ``src/tutorials`` and ``src/reference``, later ``src/nki_samples/...``)."""
    cases = []
    src = tree / "src"
    for f in sorted(src.glob("**/tutorials/**/*.py")):
        text = f.read_text(errors="replace")
        if _is_tutorial_case(f, text):
            # the tutorial's kernels may sit next to it: the case changes with its folder
            key = f"{f.name}:{_digest(f.parent)}"
            cases.append(("tutorial", f, [src], key, _generation(f)))
    refs = [d for d in (src / "nki_samples" / "reference", src / "reference") if d.is_dir()]
    for f in sorted(tree.glob("test/unit/test_*.py")):
        text = f.read_text(errors="replace")
        if "reference" in text and not refs:
            continue  # its kernels are gone from this revision: upstream cannot run it either
        deps = [f, *_imported(text, refs)]
        cases.append(("unit", f, [src, *refs], _digest(*deps), _generation(*deps)))
    return cases


#: the folders of the SDK repository that hold its NKI tests and examples
SDK_PATHS = ("nki", "general/nki")


def _sdk_cases(tree: Path) -> list[tuple[str, Path, list[Path], str, str]]:
    """``(kind, path, roots, key, generation)`` of the SDK's own NKI tests in one exported
    revision (``nki/test`` since late 2025, ``general/nki/test`` before): each file is run
    through pytest (they are ``unittest`` cases of kernels jitted for simulation); and the
    example kernels of ``nki/examples`` and ``nki/deep-dives/src`` that check themselves when
    run, as tutorials."""
    cases = []
    for folder in (tree / "nki" / "test", tree / "general" / "nki" / "test"):
        for f in sorted(folder.glob("test_*.py")):
            cases.append(("unit", f, [folder], "sdk:" + _digest(f), _generation(f)))
    # the documentation's example kernels that check themselves against NumPy when run
    for folder in (tree / "nki" / "examples", tree / "nki" / "deep-dives" / "src"):
        for f in sorted(folder.glob("**/*.py")):
            text = f.read_text(errors="replace")
            if _is_tutorial_case(f, text):
                key = f"sdk:{f.name}:{_digest(f.parent)}"
                cases.append(("tutorial", f, [f.parent], key, _generation(f)))
    return cases


def _revisions(gitdir: str, revs: str | None, every: int) -> list[str]:
    if revs:
        return revs.split(",")
    commits = _git(gitdir, "rev-list", "--first-parent", "HEAD").split()
    return commits[::every] if every > 0 else commits[:1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", help="git directory of the NKI samples repository")
    ap.add_argument("--library", help="git directory of the NKI library repository")
    ap.add_argument("--sdk", help="git directory of the Neuron SDK repository (its NKI tests)")
    ap.add_argument("--sdk-revs", help="comma-separated SDK revisions (default: HEAD)")
    ap.add_argument("--revs", help="comma-separated samples revisions (default: see --every)")
    ap.add_argument("--every", type=int, default=6, help="every Nth first-parent commit")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per case")
    ap.add_argument(
        "--generation", choices=("current", "legacy"), help="run only this API generation's cases"
    )
    ap.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="what --timeout counts: process CPU time (default) or wall time",
    )
    ap.add_argument(
        "--memory",
        type=float,
        default=DEFAULT_MEMORY_GIB,
        help="GiB of address space per child process (0: no limit); past it a case is 'memory'",
    )
    ap.add_argument(
        "--seen",
        help="file of case keys (one a line) already counted elsewhere: those cases are left out",
    )
    ap.add_argument("--keys", action="store_true", help="end each printed row with its case key")
    ap.add_argument("-v", action="store_true", help="print each case")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--root", action="append", default=[], help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child[0], a.child[1], a.root, a.timeout, a.clock, a.memory)
        return 0
    if not (a.samples or a.library or a.sdk):
        ap.error("give --samples, --library and/or --sdk")
    sys.stdout.reconfigure(line_buffering=True)  # each case's row as it ends, also into a file
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    seen: set[str] = set(Path(a.seen).read_text().split()) if a.seen else set()
    with tempfile.TemporaryDirectory(prefix="public_nki_") as tmp:
        if a.samples:
            for i, rev in enumerate(_revisions(a.samples, a.revs, a.every)):
                tree = Path(tmp) / f"s{i}"
                _export(a.samples, rev, tree)
                for kind, path, roots, key, gen in _sample_cases(tree):
                    if key in seen or a.generation not in (None, gen):
                        continue
                    seen.add(key)
                    limit = a.timeout * (40 if kind == "unit" else 1) + 60
                    for row in _spawn(kind, path, roots, a.timeout, limit, a.clock, a.memory):
                        counts[gen][row["outcome"]] += 1
                        if a.v or row["outcome"] != "matched":
                            tail = f"  [{key}]" if a.keys else ""
                            print(
                                f"{rev[:8]} {gen:7} {row['outcome']:9} {row['name']}  "
                                f"{row['detail']}{tail}"
                            )
        if a.sdk:
            for i, rev in enumerate((a.sdk_revs or "HEAD").split(",")):
                tree = Path(tmp) / f"sdk{i}"
                _export(a.sdk, rev, tree, SDK_PATHS)
                for kind, path, roots, key, gen in _sdk_cases(tree):
                    if key in seen or a.generation not in (None, gen):
                        continue
                    seen.add(key)
                    limit = a.timeout * 20 + 60
                    for row in _spawn(kind, path, roots, a.timeout, limit, a.clock, a.memory):
                        counts[f"sdk {gen}"][row["outcome"]] += 1
                        if a.v or row["outcome"] != "matched":
                            print(
                                f"sdk {rev[:8]} {gen:7} {row['outcome']:9} {row['name']}  "
                                f"{row['detail']}"
                            )
        if a.library:
            tree = Path(tmp) / "lib"
            _export(a.library, "HEAD", tree)
            root = tree / "src" / "nkilib_src"
            lib = [root, tree / "src"]
            for row in _spawn("library", root / "nkilib", lib, a.timeout, 3600, a.clock, a.memory):
                counts["library import"][row["outcome"]] += 1
                if a.v or row["outcome"] != "matched":
                    print(f"library {row['outcome']:9} {row['name']}  {row['detail']}")
    cols = [*COLUMNS]
    for c in counts.values():
        if c["device"]:
            print(f"{c['device']} device-only test(s) (nki.benchmark timings) are no cases")
        del c["device"]
    print(f"\n{'generation':16}{'cases':>7}" + "".join(f"{c:>11}" for c in cols))
    for gen, c in sorted(counts.items()):
        print(f"{gen:16}{sum(c.values()):>7}" + "".join(f"{c[k]:>11}" for k in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
