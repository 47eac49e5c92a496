"""Static checks of the kernel corpus: file layout, bindings, references, and nvcc validity."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from corpus_catalog import (
    CORPUS,
    Entry,
    entries,
    global_signatures,
    load_reference,
    readme_table,
    refused,
    runnable,
)

ALL = entries()
IDS = [e.id for e in ALL]
RUN_IDS = [e.id for e in runnable()]
NVCC = shutil.which("nvcc")
#: the default run compiles a representative sample; the whole corpus is under -m slow
NVCC_SAMPLE = {
    "basic/vector_add",
    "refuse/recursion_factorial",
    "refuse/inline_ptx",
    "refuse/dynamic_parallelism",
}

REQUIRED_IDIOMS = {
    "map",
    "reduce",
    "softmax",
    "norm",
    "matmul",
    "gemv",
    "transpose",
    "stencil",
    "scan",
    "histogram",
    "gather",
}


def _binding():
    return pytest.importorskip("cuda2nki.binding", reason="cuda2nki.binding not available yet")


def test_corpus_size_and_suites() -> None:
    assert len(runnable()) >= 30
    assert len(refused()) >= 3
    idioms = {e.data.get("idiom") for e in ALL}
    assert REQUIRED_IDIOMS <= idioms, REQUIRED_IDIOMS - idioms
    assert (CORPUS / "basic" / "vector_add.cu").is_file()
    assert (CORPUS / "README.md").is_file()


def test_readme_lists_every_kernel() -> None:
    readme = (CORPUS / "README.md").read_text(encoding="utf-8").split("\n")
    assert all(row in readme for row in readme_table()), (
        "corpus/README.md's kernel table is stale: run python tests/corpus/corpus_catalog.py"
    )


def test_no_orphan_files() -> None:
    stems = {e.cu.with_suffix("") for e in ALL}
    for p in CORPUS.glob("*/*"):
        if p.is_dir():  # e.g. ports/ with hand-written NKI ports beside the kernels
            continue
        if p.suffix == ".toml":
            assert p.with_suffix("") in stems, f"{p} has no .cu"
        elif p.name.endswith("_ref.py"):
            assert p.with_name(p.name[: -len("_ref.py")]) in stems, f"{p} has no .cu"
        elif p.suffix not in (".cu", ".md"):
            pytest.fail(f"unexpected file in corpus: {p}")


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_files_present(entry: Entry) -> None:
    assert entry.toml.is_file(), f"{entry.id}: missing {entry.toml.name}"
    if entry.refuse:
        assert str(entry.data.get("expect_id", "")).startswith("C2N1"), entry.id
    else:
        assert entry.ref.is_file(), f"{entry.id}: missing {entry.ref.name}"
    assert "description" in entry.data and "idiom" in entry.data


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_binding_matches_signature(entry: Entry) -> None:
    binding = _binding().load_binding(entry.toml)
    sigs = global_signatures(entry.source)
    assert sigs, f"{entry.id}: no __global__ kernel found"
    kernel = binding.kernel or next(iter(sigs))
    if binding.kernel is None:
        assert len(sigs) == 1, f"{entry.id}: several kernels, the binding must name one"
    assert kernel in sigs, f"{entry.id}: kernel {kernel!r} not in {sorted(sigs)}"
    assert sorted(binding.param_names) == sorted(_params(entry, kernel, sigs[kernel])), entry.id
    # a host-side launch site exists for the bound kernel
    launched = re.search(rf"\b{kernel}\s*(<[^<>;]*>\s*)?<<<", entry.source) or re.search(
        rf"cudaLaunch\w*\([^;]*\b{kernel}\b", entry.source
    )
    assert launched, f"{entry.id}: no host launch of {kernel}"


def _params(entry: Entry, kernel: str, written: list[str]) -> list[str]:
    """The kernel's parameters: as written, but an array of a mixed-type struct is one array
    per member (:mod:`cuda2nki.frontend.recordsplit`), and a file-scope ``__device__`` variable
    the kernel uses is one more (:mod:`cuda2nki.frontend.deviceparams`)."""
    if not re.search(r"\bstruct\b|^\s*(__managed__|__device__)\s+(?!.*\()", entry.source, re.M):
        return list(written)
    from cuda2nki.frontend import parse_source

    tu = parse_source(entry.source, str(entry.cu))
    fn = next((f for f in tu.kernels if f.name == kernel), None)
    if fn is None or not any(p.record or p.symbol for p in fn.params):
        return list(written)
    return [p.name for p in fn.params]


@pytest.mark.parametrize("entry", runnable(), ids=RUN_IDS)
def test_check_shapes_are_ragged(entry: Entry) -> None:
    """At least two extra test points, one of them with a size that is not a multiple of the
    block size nor of 128."""
    binding = _binding().load_binding(entry.toml)
    assert len(binding.shapes) >= 2, entry.id
    ragged = False
    for point in binding.test_points()[1:]:
        block0 = int(binding.resolve(point).block[0])
        sizes = [v for v in point.values() if isinstance(v, int) and v > 1]
        ragged |= any(v % block0 and v % 128 for v in sizes)
    assert ragged, f"{entry.id}: no test point with a ragged size"


@pytest.mark.parametrize("entry", runnable(), ids=RUN_IDS)
def test_reference_runs_on_every_point(entry: Entry) -> None:
    """The reference returns every out/inout tensor with the bound shape, and no NaN."""
    b = _binding()
    binding = b.load_binding(entry.toml)
    reference = load_reference(entry.ref)
    written = {t.name for t in binding.tensors if t.role != "in"}
    changed: set[str] = set()
    for point in binding.test_points():
        resolved = binding.resolve(point)
        if max(int(np.prod(s)) for s in resolved.shapes.values()) > 2_000_000:
            continue
        inputs = b.generate_inputs(resolved, seed=1)
        frozen = {k: v.copy() for k, v in inputs.items()}
        got = reference(inputs, dict(resolved.scalars))
        assert set(got) == written, entry.id
        for name, arr in got.items():
            assert tuple(arr.shape) == resolved.shapes[name], (entry.id, name)
            assert not np.isnan(np.asarray(arr, dtype=np.float64)).any(), (entry.id, name)
            if not np.array_equal(np.asarray(arr), np.asarray(frozen[name])):
                changed.add(name)
        for k, v in frozen.items():  # references must not modify their inputs
            assert np.array_equal(np.asarray(inputs[k]), np.asarray(v)), (entry.id, k)
    # a kernel that writes nothing must not pass: on some test point the expected result of
    # every written tensor differs from the buffer's initial contents
    assert changed == written, (entry.id, written - changed)


def test_refusal_ids_are_declared() -> None:
    from cuda2nki.diagnostics import rules

    pytest.importorskip("cuda2nki.rules.c2n1_frontend", reason="front-end rules not available yet")
    import cuda2nki.rules  # noqa: F401  (registers every family)

    declared = rules()
    for e in refused():
        assert e.data["expect_id"] in declared, e.id


def _nvcc(entry: Entry, tmp: Path) -> subprocess.CompletedProcess[str]:
    flags = list(entry.data.get("nvcc_flags", []))
    cmd = [
        NVCC,
        "-arch=sm_80",
        "-rdc=true",
        "-fdevice-syntax-only",
        "-Xcompiler",
        "-fsyntax-only",
        "-c",
        str(entry.cu),
        "-o",
        str(tmp / "out.o"),
        *flags,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("entry", [e for e in ALL if e.id in NVCC_SAMPLE], ids=lambda e: e.id)
def test_nvcc_accepts_sample(entry: Entry, tmp_path: Path) -> None:
    proc = _nvcc(entry, tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_nvcc_accepts_everything(entry: Entry, tmp_path: Path) -> None:
    proc = _nvcc(entry, tmp_path)
    assert proc.returncode == 0, proc.stderr
