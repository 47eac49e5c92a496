"""Run the public NKI tutorial kernels whose own checks need torch or jax against NumPy goldens.

Not a benchmark of speed and not a test: the public repositories are not part of this project.
The tutorials' matrix multiplication, transpose, average pool and Mamba kernels are checked
upstream by ``*_torch.py`` / ``*_jax.py`` drivers, which :mod:`bench.public_nki` leaves out; here
each kernel is called on the driver's sizes with a golden written here in NumPy from the
kernel's documented contract::

    python -m bench.public_nki_tutorials [--samples PATH/TO/nki-samples.git] [--revs REV,...]
        [--every N] [--sdk PATH/TO/aws-neuron-sdk.git] [--sdk-revs REV,...] [--timeout S] [-v]

Kernels are found in the samples' ``src/**/tutorials/<folder>/`` and the SDK's
``nki/examples/<folder>/`` (and ``nki/examples/`` itself: the single-file examples of the
indexing and layout guides, one of which shows a violation: that case matches when the simulator
raises the documented error); a case is a kernel of one content of its file, so a file unchanged
across revisions counts once.  The API generation is ``legacy`` when the file imports
``neuronxcc``, else ``current``.  A kernel of the current API is called as a function; a legacy
one through ``nki.simulate_kernel``, with a zero-filled output argument where its signature
takes one (``result``, ``out_tensor``, ``output``: the 2024 tutorials).  Each case runs in a
child process of :mod:`bench.public_nki` (same outcomes, CPU-time limit and memory cap).
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.public_nki import (
    COLUMNS,
    DEFAULT_MEMORY_GIB,
    MARK,
    SDK_PATHS,
    _alarm,
    _cap_memory,
    _digest,
    _disarm,
    _export,
    _generation,
    _revisions,
    classify,
)

#: parameter names of a legacy kernel's output argument
OUTPUT_PARAMS = ("result", "out_tensor", "output")


@dataclass(frozen=True)
class Case:
    name: str
    folder: str  # the tutorial's folder, e.g. "matrix_multiplication"
    module: str  # the kernel file's stem
    kernel: str  # the kernel's name (a trailing "_" is optional across revisions)
    # args, kwargs, golden (one array, or a tuple: one per output)
    build: Callable[[np.random.Generator], tuple[list, dict, np.ndarray | tuple]]
    rtol: float = 1e-2
    atol: float = 1e-4
    #: a documentation example that shows a constraint violation: the id the simulator must
    #: raise (the case matches when it does)
    expect: str | None = None


def _bf16(x: np.ndarray) -> np.ndarray:
    import ml_dtypes

    return x.astype(ml_dtypes.bfloat16)


def _matmul(m: int, k: int, n: int):
    """``lhsT`` (K, M) and ``rhs`` (K, N) bf16, result ``lhsT.T @ rhs`` (M, N)."""

    def build(rng):
        lhs_t, rhs = _bf16(rng.random((k, m))), _bf16(rng.random((k, n)))
        return [lhs_t, rhs], {}, lhs_t.astype(np.float32).T @ rhs.astype(np.float32)

    return build


def _transpose2d(p: int, x: int, y: int):
    """Each partition's (X, Y) block of a (P, X*Y) tensor transposed to (Y, X)."""

    def build(rng):
        a = np.arange(p * x * y, dtype=np.int8).reshape(p, x * y)
        return [a], {"shape2D": (x, y)}, a.reshape(p, x, y).transpose(0, 2, 1).reshape(p, x * y)

    return build


def _avgpool(c: int, h: int, w: int, pool: int):
    """Non-overlapping ``pool`` x ``pool`` mean over (C, H, W)."""

    def build(rng):
        x = _bf16(np.arange(c * h * w, dtype=np.float32).reshape(c, h, w) / (c * h * w))
        ref = x.astype(np.float32).reshape(c, h // pool, pool, w // pool, pool).mean((2, 4))
        return [x], {"pool_size": pool}, ref

    return build


def _mamba(batch: int, channels: int, seq: int, state: int):
    """The selective scan: ``h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t``, ``y_t = C_t . h_t``
    over the state axis (inputs in (0, 1], A negative, so the scan stays bounded)."""

    def build(rng):
        delta = rng.random((batch, channels, seq), dtype=np.float32) * 0.5 + 0.1
        u = rng.random((batch, channels, seq), dtype=np.float32)
        a = -rng.random((channels, state), dtype=np.float32) - 0.5
        b = rng.random((batch, state, seq), dtype=np.float32)
        c = rng.random((batch, state, seq), dtype=np.float32)
        decay = np.exp(delta[:, :, None, :] * a[None, :, :, None])  # (b, ch, st, seq)
        drive = delta[:, :, None, :] * b[:, None, :, :] * u[:, :, None, :]
        h = np.zeros((batch, channels, state), np.float64)
        y = np.empty((batch, channels, seq), np.float64)
        for t in range(seq):
            h = decay[..., t] * h + drive[..., t]
            y[..., t] = (h * c[:, None, :, t]).sum(-1)
        return [delta, u, a, b, c], {}, y.astype(np.float32)

    return build


def _exp(p: int, f: int):
    """``exp`` of a (P, F) bf16 tensor (the SDK's layout examples, run on a (P, F) input)."""

    def build(rng):
        x = _bf16(rng.random((p, f)))
        return [x], {}, np.exp(x.astype(np.float32))

    return build


def _split(p: int, f: int):
    """Even and odd columns of a (P, F) tensor, as two outputs."""

    def build(rng):
        x = _bf16(np.arange(p * f, dtype=np.float32).reshape(p, f))
        return [x], {}, (x[:, 0::2].astype(np.float32), x[:, 1::2].astype(np.float32))

    return build


def _maxpool(c: int, h: int, w: int, pool: int):
    """Non-overlapping ``pool`` x ``pool`` max over (C, H, W)."""

    def build(rng):
        x = _bf16(rng.permutation(c * h * w).astype(np.float32).reshape(c, h, w))
        ref = x.astype(np.float32).reshape(c, h // pool, pool, w // pool, pool).max((2, 4))
        return [x, pool], {}, ref

    return build


CASES = [
    Case("matmul basic 64x128x512", "matrix_multiplication", "matrix_multiplication_nki_kernels",
         "nki_matmul_basic_", _matmul(64, 128, 512)),
    *(
        Case(f"matmul {v} 4096x1024x2048", "matrix_multiplication",
             "matrix_multiplication_nki_kernels", f"nki_matmul_{v}_", _matmul(4096, 1024, 2048))
        for v in ("tiled", "hoist_load", "block_free_dimension", "fully_optimized")
    ),
    *(
        Case(f"transpose2d {p}x{x}x{y}", "transpose2d", "transpose2d_nki_kernels",
             "tensor_transpose2D_kernel_", _transpose2d(p, x, y), rtol=0, atol=0)
        for p, x, y in ((5, 3, 4), (128, 16, 8))
    ),
    *(
        Case(f"avgpool2d {c}x{h}x{w}/{k}", "average_pool2d", "average_pool2d_nki_kernels",
             "tensor_avgpool_kernel_", _avgpool(c, h, w, k))
        for c, h, w, k in ((2, 10, 10, 2), (128, 16, 24, 4))
    ),
    *(
        Case(f"mamba_{v} 1x256x512x16", "fused_mamba", "mamba_nki_kernels", f"mamba_{v}",
             _mamba(1, 256, 512, 16), atol=1e-2)
        for v in ("v1", "v2", "v3")
    ),
    # the SDK's current-API examples of its indexing and layout guides (nki/examples/*.py),
    # driven upstream by torch on these sizes
    Case("layout-pass exp 128x512", "examples", "layout-pass", "tensor_exp_kernel_",
         _exp(128, 512)),
    Case("layout-violation exp 256x512", "examples", "layout-violation", "tensor_exp_kernel_",
         _exp(256, 512), expect="C2N3002"),
    Case("index-case-1 split 4x5", "examples", "index-case-1", "tensor_split_kernel_",
         _split(4, 5), rtol=0, atol=0),
    *(
        Case(f"index-case-3 maxpool {c}x{h}x{w}/{k}", "examples", "index-case-3",
             "tensor_maxpool_kernel_", _maxpool(c, h, w, k), rtol=0, atol=0)
        for c, h, w, k in ((2, 6, 6, 2), (128, 12, 16, 4))
    ),
]  # fmt: skip


def _kernel(module, name: str):
    """The kernel ``name``, also spelled without or with its trailing underscore."""
    for n in (name, name.rstrip("_"), name + "_"):
        if hasattr(module, n):
            return getattr(module, n)
    raise AttributeError(f"{module.__name__} has no kernel {name!r}")


def _parameters(fn) -> list[str]:
    target = getattr(fn, "func", None) or getattr(fn, "__wrapped__", None) or fn
    try:
        return list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return []


def run_case(case: Case, module, generation: str, seed: int) -> None:
    """Call ``case``'s kernel of ``module`` and compare with the golden (raises on a
    mismatch, or when an expected violation is not raised)."""
    if case.expect is None:
        _call_and_compare(case, module, generation, seed)
        return
    from cuda2nki.diagnostics import DiagnosticError

    try:
        _call_and_compare(case, module, generation, seed)
    except DiagnosticError as exc:
        if exc.diagnostic.code != case.expect:
            raise
        return
    raise AssertionError(f"the documented violation {case.expect} was not raised")


def _call_and_compare(case: Case, module, generation: str, seed: int) -> None:
    args, kwargs, golden = case.build(np.random.default_rng(seed))
    fn = _kernel(module, case.kernel)
    if generation == "current":
        out = fn(*args, **kwargs)
    else:
        import neuronxcc.nki as lnki

        params = _parameters(fn)
        given = [p for p in params if p not in kwargs][: len(args) + 1]
        if len(given) > len(args) and given[-1] in OUTPUT_PARAMS:
            out = np.zeros(golden.shape, args[0].dtype)
            lnki.simulate_kernel(fn, *args, out, *kwargs.values())
        else:
            out = lnki.simulate_kernel(fn, *args, *kwargs.values())
    if isinstance(golden, tuple):
        assert isinstance(out, (list, tuple)) and len(out) == len(golden), (
            f"{len(golden)} outputs expected"
        )
        for o, g in zip(out, golden):
            _compare(case, o, g)
    else:
        _compare(case, out[0] if isinstance(out, (list, tuple)) else out, golden)


def _compare(case: Case, out, golden: np.ndarray) -> None:
    got = np.asarray(out, np.float32)
    assert got.shape == golden.shape, f"result shape {got.shape}, golden {golden.shape}"
    assert np.allclose(got, golden, rtol=case.rtol, atol=case.atol), (
        f"max abs error {float(np.max(np.abs(got - golden))):.3g}"
    )


def child(folder: str, index: int, generation: str, timeout: int, memory: float) -> None:
    import importlib

    from cuda2nki.nkisim import nki_namespace

    _cap_memory(memory)
    case = CASES[index]
    sys.path.insert(0, folder)
    os.chdir(folder)
    with nki_namespace(shadow=True):
        _alarm(timeout)
        try:
            run_case(case, importlib.import_module(case.module), generation, index)
        except BaseException as exc:  # noqa: BLE001 - classified and reported
            _disarm()
            out = classify(exc)
        else:
            _disarm()
            out = classify(None)
    print(MARK + json.dumps({"name": case.name, "outcome": out[0], "detail": out[1]}), flush=True)


def _folders(tree: Path) -> dict[str, Path]:
    """The tutorial folders of an exported samples or SDK tree, by name."""
    found = {}
    for pattern in ("src/**/tutorials/*/", "nki/examples/*/"):
        for d in sorted(tree.glob(pattern)):
            found.setdefault(d.name, d)
    if (tree / "nki" / "examples").is_dir():  # the guides' single-file examples
        found.setdefault("examples", tree / "nki" / "examples")
    return found


def _spawn(folder: Path, index: int, gen: str, timeout: int, memory: float) -> dict:
    cmd = [sys.executable, "-m", "bench.public_nki_tutorials", "--child", str(folder), str(index)]
    cmd += ["--generation", gen, "--timeout", str(timeout), "--memory", str(memory)]
    path = [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout * 10, env=env, check=False
        )
        out, err = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        out, err = "", "child process hung"
    rows = [json.loads(ln[ln.index(MARK) + len(MARK) :]) for ln in out.splitlines() if MARK in ln]
    if rows:
        return rows[0]
    tail = (err.strip().splitlines() or ["child process ended"])[-1][:160]
    return {"name": CASES[index].name, "outcome": "crash", "detail": tail}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", help="git directory of the NKI samples repository")
    ap.add_argument("--revs", help="comma-separated samples revisions (default: see --every)")
    ap.add_argument("--every", type=int, default=6, help="every Nth first-parent commit")
    ap.add_argument("--sdk", help="git directory of the Neuron SDK repository")
    ap.add_argument("--sdk-revs", default="HEAD", help="comma-separated SDK revisions")
    ap.add_argument("--timeout", type=int, default=120, help="CPU seconds per case")
    ap.add_argument(
        "--memory", type=float, default=DEFAULT_MEMORY_GIB, help="GiB of address space per case"
    )
    ap.add_argument("--generation", default="current", help=argparse.SUPPRESS)
    ap.add_argument("-v", action="store_true", help="print each case")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child[0], int(a.child[1]), a.generation, a.timeout, a.memory)
        return 0
    if not (a.samples or a.sdk):
        ap.error("give --samples and/or --sdk")
    sys.stdout.reconfigure(line_buffering=True)
    sources = []
    if a.samples:
        sources += [("samples", a.samples, r) for r in _revisions(a.samples, a.revs, a.every)]
    if a.sdk:
        sources += [("sdk", a.sdk, r) for r in a.sdk_revs.split(",")]
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    seen: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="public_nki_tutorials_") as tmp:
        for i, (suite, gitdir, rev) in enumerate(sources):
            tree = Path(tmp) / f"t{i}"
            _export(gitdir, rev, tree, SDK_PATHS if suite == "sdk" else ())
            folders = _folders(tree)
            for index, case in enumerate(CASES):
                src = folders.get(case.folder, tree / "-") / f"{case.module}.py"
                if not src.is_file():
                    continue
                key = f"{case.name}:{_digest(src)}"
                if key in seen:
                    continue
                seen.add(key)
                gen = _generation(src)
                row = _spawn(src.parent, index, gen, a.timeout, a.memory)
                counts[f"{suite} {gen}"][row["outcome"]] += 1
                if a.v or row["outcome"] != "matched":
                    print(f"{suite} {rev[:8]} {gen:7} {row['outcome']:9} {row['name']}  "
                          f"{row['detail']}")  # fmt: skip
    cols = [*COLUMNS]
    print(f"\n{'suite':16}{'cases':>7}" + "".join(f"{c:>11}" for c in cols))
    for name, c in sorted(counts.items()):
        print(f"{name:16}{sum(c.values()):>7}" + "".join(f"{c[k]:>11}" for k in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
