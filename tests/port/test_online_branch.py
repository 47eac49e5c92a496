"""Online softmax normalisers whose new maximum is taken by a branch (``if (v > m) {...} else
{...}``, the condition inverted, or two ternaries) port through the softmax recogniser on both
targets; a double normaliser is narrowed with warning C2N2515, not described as the CUDA
kernel's own fp32 accumulation."""

from __future__ import annotations

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.online_branch import canonical_online
from cuda2nki.pipeline import port_file
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]
KERNELS = [
    "norm/softmax_online_branch",
    "norm/softmax_online_branch_double",
    "norm/softmax_online_ternary",
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", KERNELS)
def test_ports_through_the_softmax_recogniser(rel: str, target: str, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == "softmax"


def test_a_double_normaliser_is_said_to_be_narrowed() -> None:
    path = CORPUS / "norm/softmax_online_branch_double.cu"
    res = port_file(path, binding=load_binding(path.with_suffix(".toml")), target="nki")
    codes = {d.code for d in res.diagnostics}
    assert "C2N2515" in codes and "C2N2510" not in codes


F = "float32"
D, M = V.Carried(F, "d"), V.Carried(F, "m")
X = V.Load(F, "x", af.ZERO)


def _exp(a: V.DExpr, b: V.DExpr) -> V.DExpr:
    return V.Op(F, "exp", (V.Op(F, "sub", (a, b)),))


def _op(op: str, *args: V.DExpr) -> V.DExpr:
    return V.Op("bool" if op in ("gt", "lt", "le", "ge", "lnot") else F, op, args)


def _run(d_new: V.DExpr, m_new: V.DExpr) -> dict:
    env = {"d": d_new, "m": m_new}
    canonical_online(env, {"d": V.Const(F, 0.0), "m": V.Const(F, float("-inf"))})
    return env


def test_the_branch_becomes_the_max_form() -> None:
    up = _op("add", _op("mul", D, _exp(M, X)), V.Const(F, 1.0))
    down = _op("add", D, _exp(X, M))
    env = _run(V.Select(F, _op("gt", X, M), up, down), V.Select(F, _op("gt", X, M), X, M))
    top = V.Op(F, "max", (M, X))
    assert env["m"] == top
    assert env["d"] == _op("add", _op("mul", D, _exp(M, top)), _exp(X, top))


def test_inverted_conditions_are_read_the_same() -> None:
    up = _op("add", _op("mul", D, _exp(M, X)), _exp(X, X))
    down = _op("add", D, _exp(X, M))
    cond = _op("lnot", _op("lt", M, X))
    env = _run(V.Select(F, cond, down, up), V.Select(F, _op("le", X, M), M, X))
    assert env["m"] == V.Op(F, "max", (M, X))


@pytest.mark.parametrize(
    "up",
    [
        _op("mul", D, _exp(M, X)),  # the new value's own term is missing
        _op("add", D, V.Const(F, 1.0)),  # the sum is not rescaled
    ],
)
def test_other_updates_are_left_alone(up: V.DExpr) -> None:
    down = _op("add", D, _exp(X, M))
    d_new = V.Select(F, _op("gt", X, M), up, down)
    m_new = V.Select(F, _op("gt", X, M), X, M)
    env = _run(d_new, m_new)
    assert env["d"] is d_new and env["m"] is m_new
