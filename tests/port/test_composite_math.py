"""Math functions NKI has no activation for (``coshf``, ``sinhf``, ``cosh``, ``log10f``,
``exp10f``) are written with ones it has, so the kernels that use them port through the map
recogniser on both targets and match the CUDA kernel."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.symexec import _composed
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]
KERNELS = ["activation/gelu_backward_sech", "activation/sinh_cosh_2d", "activation/decibel_log10"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", KERNELS)
def test_ports_through_the_map_recogniser(rel: str, target: str, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == "map"


def _ops(e: object) -> list[str]:
    if isinstance(e, V.Op):
        return [e.op, *(o for a in e.args for o in _ops(a))]
    return []


def composite_call(name: str, dt: str, args: list) -> object:
    return _composed(name, args, dt)


@pytest.mark.parametrize(
    ("name", "core"),
    [("coshf", "exp"), ("cosh", "exp"), ("sinhf", "exp"), ("exp10f", "exp"), ("log10", "log")],
)
def test_expansions_use_functions_with_activations(name: str, core: str) -> None:
    from cuda2nki.ir.ops import OP_INFO, Op

    x = V.Const("float32", 1.0)
    got = composite_call(name, "float32", [x])
    ops = _ops(got)
    assert core in ops
    assert all(o == "div" or OP_INFO[Op(o)].nki is not None for o in ops)


def test_other_names_and_arities_are_left_alone() -> None:
    x = V.Const("float32", 1.0)
    assert composite_call("tanhf", "float32", [x]) is None
    assert composite_call("coshf", "float32", [x, x]) is None


@pytest.mark.parametrize("name", ["coshf", "sinhf", "exp10f", "log10f"])
def test_expansions_agree_with_numpy(name: str) -> None:
    from cuda2nki.ir.numerics import BINARY, UNARY
    from cuda2nki.ir.ops import Op

    xs = np.linspace(0.1, 8.0, 97, dtype=np.float32)

    def ev(e: object) -> np.ndarray:
        if isinstance(e, V.Const):
            return np.float32(e.value)
        if isinstance(e, V.Op):
            args = [ev(a) for a in e.args]
            table = UNARY if len(args) == 1 else BINARY
            return table[Op(e.op)](*args)
        return xs

    got = ev(composite_call(name, "float32", [V.Load("float32", "x", af.ZERO)]))  # type: ignore[arg-type]
    want = {"coshf": np.cosh, "sinhf": np.sinh, "exp10f": lambda v: 10.0**v, "log10f": np.log10}
    np.testing.assert_allclose(got, want[name](xs.astype(np.float64)), rtol=2e-6)
