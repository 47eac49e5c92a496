"""Issue 4 §6 acceptance over the corpus: every kernel that is not a deliberate refusal ports,
runs in the NKI simulator without constraint errors and matches the SIMT interpreter on the
binding's test points (>= 3 shapes incl. ragged sizes), for both targets.

Skipped while the lifter (``cuda2nki.lift.lift_kernel``) is not available.  The default run
checks a small sample; the full sweep is ``-m slow``.
"""

from __future__ import annotations

import importlib

import pytest

from tests.port.acceptance import CORPUS, check_kernel, corpus_kernels

pytestmark = pytest.mark.skipif(
    getattr(importlib.import_module("cuda2nki.lift"), "lift_kernel", None) is None,
    reason="the lifter is not available yet",
)
SAMPLE = ("basic/vector_add.cu", "basic/saxpy.cu")


def _expect_port(path, target: str = "nki") -> bool:
    return path.parent.name != "refuse" and _port_refusal(path, target) is None


def _port_refusal(path, target: str = "nki") -> str | None:
    """The id a kernel's binding says its port must be refused with (``[port] expect =
    "refuse"``): a kernel the front end and the interpreter run, whose contract NKI cannot keep;
    ``[port] legacy = "refuse"``: one the legacy API alone cannot state (a runtime loop)."""
    from cuda2nki.binding import load_binding

    port = load_binding(path.with_suffix(".toml")).meta.get("port", {})
    if target == "legacy" and port.get("legacy") == "refuse":
        return "C2N2301"
    return port.get("id", "C2N2") if port.get("expect") == "refuse" else None


#: corpus kernels that neither a recogniser nor the literal lowering can port yet (issue: every
#: runnable kernel should port); each must be refused cleanly, naming the construct
KNOWN_GAPS: dict[str, str] = {}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", SAMPLE)
def test_sample(rel, target, tmp_path) -> None:
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"{rel} not in the corpus")
    out = check_kernel(path, target, tmp_path)
    assert out.status == "match", out


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("path", corpus_kernels(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus(path, target, tmp_path) -> None:
    out = check_kernel(path, target, tmp_path)
    if not _expect_port(path, target):
        assert out.status == "refused", out
        assert (_port_refusal(path, target) or "") in out.detail, out
        return
    gap = KNOWN_GAPS.get(f"{path.parent.name}/{path.stem}")
    if gap is not None:  # fails (and must leave the list) once the kernel ports
        assert out.status == "refused" and "C2N2" in out.detail, out
        pytest.xfail(f"not ported yet: {gap}")
    assert out.status in ("match", "literal"), out
