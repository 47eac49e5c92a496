"""A corpus kernel lifted with its binding, for the checker's intent-derived figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cuda2nki.binding import Binding, load_binding
from cuda2nki.frontend import parse_file
from cuda2nki.lift import lift_kernel

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def lift_corpus(rel: str) -> tuple[Any, Binding]:
    """(lift result, binding) of ``corpus/<rel>.cu``; the kernel must be recognised."""
    cu = CORPUS / f"{rel}.cu"
    b = load_binding(cu.with_suffix(".toml"))
    tu = parse_file(cu)
    res = lift_kernel(tu, b.kernel or tu.kernels[0].name, b)
    assert res.claimed, res.diagnostics
    return res, b
