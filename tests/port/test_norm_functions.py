"""Kernels using the norm math functions (``norm3df``, ``rnorm3df``, ``rhypotf``,
``norm4df``...) port, through the map recogniser and through the literal lowering, as square
roots of sums of squares (NKI has no norm instruction) and match the CUDA kernel."""

from __future__ import annotations

import pytest

from cuda2nki.lift import mathcompose
from tests.port.acceptance import CORPUS, check_kernel

KERNEL = CORPUS / "activation/vector_norms.cu"


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_norms_port_through_the_map_recogniser(target: str, tmp_path) -> None:
    out = check_kernel(KERNEL, target, tmp_path, max_points=2)
    assert out.status == "match", out
    assert out.idiom == "map"


def test_norms_port_literally_and_check(tmp_path) -> None:
    from cuda2nki import api
    from cuda2nki.pipeline import port_file

    res = port_file(KERNEL, lowering="literal")
    assert res.source is not None and res.literal, res.diagnostics
    port = tmp_path / "norms_literal.py"
    port.write_text(res.source)
    report = api.check(str(KERNEL), str(port), seeds=1)
    assert report.numerics_outcome == "pass", report.numerics_outcome


@pytest.mark.parametrize(
    ("name", "arity"),
    [("rhypotf", 2), ("rhypot", 2), ("norm3df", 3), ("rnorm3d", 3), ("norm4d", 4), ("rnorm4df", 4)],
)
def test_every_argument_is_used_once_squared(name: str, arity: int) -> None:
    f = mathcompose.formula(name, arity)
    assert f is not None
    args = ("a", "b", "c", "d")[:arity]
    text = mathcompose.build(f, args, repr, lambda op, xs: f"{op}({', '.join(xs)})")
    for a in args:
        assert text.count(f"mul({a}, {a})") == 1, text
    assert mathcompose.formula(name, arity - 1) is None
