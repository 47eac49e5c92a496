"""Fast paths of common one-input instructions (fp32 tiles, default engine, no mask): the same
values, the same trace record (port line included) and the same diagnostics as the general path,
which they bypass."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import simulate_kernel

FAST = ("_tensor_copy_f32", "_tensor_scalar_f32", "_activation_f32")


def _load(src, shape):
    t = nl.ndarray(shape, dtype=src.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


def _store(t):
    out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def k_copy_fresh(a):
    x = _load(a, a.shape)
    y = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=x)
    return _store(y)


def k_copy_overlapping(a):
    x = _load(a, a.shape)
    nisa.tensor_copy(dst=x[:, 1:5], src=x[:, 0:4])
    return _store(x)


def k_copy_from_psum(a):
    x = _load(a, a.shape)
    p = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=p, src=x)
    y = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y[0:64], src=p[64:128])
    nisa.tensor_copy(dst=y[64:128], src=p[0:64])
    return _store(y)


def k_scalar_two_ops(a):
    x = _load(a, a.shape)
    y = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=x, op0=nl.multiply, operand0=3, op1=nl.subtract, operand1=0.25)
    return _store(y)


def k_scalar_reversed_in_place(a):
    x = _load(a, a.shape)
    nisa.tensor_scalar(
        dst=x,
        data=x,
        op0=nl.subtract,
        operand0=1.5,
        reverse0=True,
        op1=np.maximum,
        operand1=-0.5,
        reverse1=True,
    )
    return _store(x)


def k_scalar_shifted(a):
    x = _load(a, a.shape)
    nisa.tensor_scalar(dst=x[:, 2:6], data=x[:, 0:4], op0=nl.add, operand0=1.0)
    return _store(x)


def k_act_scale_bias(a):
    x = _load(a, a.shape)
    b = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=b, src=x[:, 0:1])
    y = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=y, op=nl.exp, data=x, bias=b, scale=-2.0)
    return _store(y)


def k_act_3d(a):
    x = _load(a.reshape(128, 2, 4), (128, 2, 4))
    y = nl.ndarray((128, 2, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=y, op=nl.tanh, data=x)
    nisa.activation(dst=x, op=nl.square, data=x, scale=0.5)
    z = nl.ndarray((128, 2, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
    return _store(z)


def k_act_log_warns(a):
    x = _load(a, a.shape)
    nisa.activation(dst=x, op=nl.log, data=x)
    return _store(x)


KERNELS = [
    k_copy_fresh,
    k_copy_overlapping,
    k_copy_from_psum,
    k_scalar_two_ops,
    k_scalar_reversed_in_place,
    k_scalar_shifted,
    k_act_scale_bias,
    k_act_3d,
    k_act_log_warns,
]


def _general_only(monkeypatch) -> None:
    for name in FAST:
        monkeypatch.setattr(nisa, name, lambda *a, **k: False)


def _sim(kernel, a):
    res = simulate_kernel(kernel, [a])
    return np.asarray(res.outputs), list(res.trace), [w.message for w in res.warnings]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_fast_path_matches_the_general_path(kernel, monkeypatch):
    a = np.random.default_rng(2).uniform(-2, 2, (128, 8)).astype(np.float32)
    fast = _sim(kernel, a)
    with monkeypatch.context() as m:
        _general_only(m)
        general = _sim(kernel, a)
    np.testing.assert_array_equal(fast[0], general[0])
    assert fast[1] == general[1]  # engine, op, shapes, dtypes, buffers, sizes, line, extra
    assert fast[2] == general[2]


def k_bad_start_partition(a):
    x = _load(a, a.shape)
    y = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y[0:32], src=x[16:48])
    return _store(y)


def test_fast_path_reports_the_start_partition_rule(monkeypatch):
    a = np.zeros((128, 8), np.float32)
    with pytest.raises(DiagnosticError) as fast:
        simulate_kernel(k_bad_start_partition, [a])
    _general_only(monkeypatch)
    with pytest.raises(DiagnosticError) as general:
        simulate_kernel(k_bad_start_partition, [a])
    assert fast.value.diagnostic.code == general.value.diagnostic.code == "C2N3013"
    assert str(fast.value) == str(general.value)


def test_common_instructions_skip_the_general_operand_checks(monkeypatch):
    """The whole-tile fp32 case does not go through the general path's conversions."""
    calls = []
    real = nisa._compute_operands
    monkeypatch.setattr(
        nisa, "_compute_operands", lambda *a, **k: calls.append(a[0]) or real(*a, **k)
    )
    a = np.ones((128, 8), np.float32)
    for kernel in (k_copy_fresh, k_scalar_two_ops, k_act_scale_bias):
        simulate_kernel(kernel, [a])
    assert calls == []


# --------------------------------------------------------------------------- legacy t[...] = tile

LEGACY_ASSIGNMENTS = """
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np


@nki.jit
def k(a, b):
    out = nl.ndarray((128, 8), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    u[...] = nl.exp(t)
    u[:, 1:5] = u[:, 0:4]
    u[0:64, :] = nisa.tensor_scalar(t[64:128, :], np.multiply, 2.0)
    h = nl.ndarray((128, 8), nl.bfloat16, buffer=nl.sbuf)
    h[...] = nl.copy(t, dtype=nl.bfloat16)
    u[:, 6:8] = nl.copy(h[:, 0:2], dtype=nl.float32)
    p = nl.ndarray((128, 8), nl.float32, buffer=nl.psum)
    p[...] = nl.matmul(nl.load(b), t, transpose_x=True)
    u[...] = nl.add(u, p)
    w = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    w[...] = u
    w[:, 0:4] = w[:, 4:8]
    nl.store(out, w)
    return out
"""


def _legacy_run(tmp_path, monkeypatch, general: bool):
    from cuda2nki.nkisim import language, load_kernel

    path = tmp_path / "assign.py"
    path.write_text(LEGACY_ASSIGNMENTS)
    kernel = load_kernel(path, "k")
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (128, 8)).astype(np.float32)
    b = rng.uniform(-1, 1, (128, 128)).astype(np.float32)
    with monkeypatch.context() as m:
        if general:
            m.setattr(language, "_copy_tile", lambda *args: False)
        res = simulate_kernel(kernel, [a, b])
    return np.asarray(res.outputs), list(res.trace)


def test_legacy_tile_assignment_fast_path_matches_the_general_path(tmp_path, monkeypatch):
    fast = _legacy_run(tmp_path, monkeypatch, general=False)
    general = _legacy_run(tmp_path, monkeypatch, general=True)
    np.testing.assert_array_equal(fast[0], general[0])
    assert not np.isnan(fast[0]).any()
    assert fast[1] == general[1]


def test_whole_tensor_index_is_the_tensor_itself():
    from cuda2nki.nkisim import state as st

    state = st.SimState()
    st.push(state)
    try:
        t = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.sbuf)
        assert t[...] is t
        assert t[..., 1:3].shape == (4, 2)
    finally:
        st.pop()
