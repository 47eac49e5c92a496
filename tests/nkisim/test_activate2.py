"""``nisa.activate2`` (trn3): op((data op0 imm0) op1 imm1), prelu, reductions, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import wrap_host

RNG = np.random.default_rng(11)


@pytest.fixture
def trn3():
    s = st.SimState(target=st.TARGETS["trn3"])
    st.push(s)
    yield s
    st.pop()


def tile(v: np.ndarray):
    t = nl.ndarray(v.shape, nl.float32)
    nisa.dma_copy(dst=t, src=wrap_host(v))
    return t


def run(op, x, imm0, imm1, op0, op1, **kw):
    dst = nl.ndarray(x.shape, nl.float32)
    nisa.activate2(dst, op, tile(x), imm0, imm1, op0, op1, **kw)
    return dst.values()


def test_multiply_add_then_exp(trn3):
    x = RNG.standard_normal((16, 32), dtype=np.float32)
    got = run(nl.exp, x, 0.5, -1.0, nl.multiply, nl.add)
    np.testing.assert_allclose(got, np.exp(x * np.float32(0.5) - np.float32(1.0)), rtol=1e-6)


def test_column_operands_and_reverse(trn3):
    x = RNG.standard_normal((8, 16), dtype=np.float32)
    scale = RNG.standard_normal((8, 1), dtype=np.float32)
    shift = RNG.standard_normal((8, 1), dtype=np.float32)
    got = run(nl.tanh, x, tile(scale), tile(shift), nl.multiply, nl.subtract, reverse1=True)
    np.testing.assert_allclose(got, np.tanh(shift - x * scale), rtol=1e-5, atol=1e-6)


def test_prelu_uses_relu_param(trn3):
    x = RNG.standard_normal((4, 64), dtype=np.float32)
    got = run(nl.prelu, x, 2.0, None, nl.add, nl.bypass, relu_param=0.25)
    t = x + np.float32(2.0)
    np.testing.assert_allclose(got, np.where(t >= 0, t, np.float32(0.25) * t), rtol=1e-6)


def test_max_reduction_into_reduce_res(trn3):
    x = RNG.standard_normal((8, 40), dtype=np.float32)
    res = nl.ndarray((8, 1), nl.float32)
    dst = nl.ndarray(x.shape, nl.float32)
    nisa.activate2(
        dst,
        nl.relu,
        tile(x),
        3.0,
        None,
        nl.multiply,
        nl.bypass,
        reduce_op=nl.maximum,
        reduce_res=res,
        reduce_cmd=nisa.reduce_cmd.reset_reduce,
    )
    y = np.maximum(x * np.float32(3.0), 0)
    np.testing.assert_allclose(dst.values(), y, rtol=1e-6)
    np.testing.assert_allclose(res.values(), y.max(axis=1, keepdims=True), rtol=1e-6)
    assert trn3.trace[-1].engine == "scalar"


def test_refusals(trn3):
    x = np.ones((4, 8), np.float32)
    with pytest.raises(DiagnosticError) as exc:
        run(nl.exp, x, 1.0, 1.0, nl.add, nl.multiply)  # not an allowed (op0, op1) pair
    assert exc.value.diagnostic.code == "C2N3016"
    st.current().target = st.TARGETS["trn2"]
    with pytest.raises(DiagnosticError) as exc:
        run(nl.exp, x, 1.0, 0.0, nl.multiply, nl.add)
    assert exc.value.diagnostic.code == "C2N3001" and "trn3" in exc.value.diagnostic.message
    with pytest.raises(DiagnosticError) as exc:
        nl.prelu(tile(x))
    assert exc.value.diagnostic.code == "C2N3001"
