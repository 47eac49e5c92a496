"""The tutorial-kernel adapter (``bench.public_nki_tutorials``): its NumPy goldens follow the
kernels' contracts, and it calls a kernel of either API generation the way its generation runs
it: a current kernel as a function, a legacy one through ``nki.simulate_kernel``, with a
zero-filled output argument when its signature takes one (the 2024 tutorials)."""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest

from bench import public_nki_tutorials as pt
from cuda2nki.nkisim import nki_namespace

CURRENT = """
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def tensor_transpose2D_kernel_(in_tensor, shape2D):
    x, y = shape2D
    out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((in_tensor.shape[0], x, y), dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=in_tensor.reshape((in_tensor.shape[0], x, y)))
    u = nl.ndarray((in_tensor.shape[0], y, x), dtype=in_tensor.dtype, buffer=nl.sbuf)
    for j in nl.static_range(y):
        nisa.tensor_copy(dst=u[:, j, :], src=t[:, :, j])
    nisa.dma_copy(dst=out.reshape((in_tensor.shape[0], y, x)), src=u)
    return out
"""

LEGACY_OUT_ARG = """
import neuronxcc.nki.language as nl


def tensor_avgpool_kernel_(in_tensor, out_tensor, pool_size):
    c, h, w = in_tensor.shape
    ho, wo = h // pool_size, w // pool_size
    x = nl.load(in_tensor)
    acc = nl.zeros((c, ho, wo), dtype=nl.float32)
    for di in nl.static_range(pool_size):
        for dj in nl.static_range(pool_size):
            acc[...] = nl.add(acc, x[:, di::pool_size, dj::pool_size])
    nl.store(out_tensor, value=nl.multiply(acc, 1.0 / (pool_size * pool_size)))
"""


def _module(tmp_path, name, text):
    p = tmp_path / f"{name}.py"
    p.write_text(text)
    mod = types.ModuleType(name)
    exec(compile(text, str(p), "exec"), mod.__dict__)
    return mod


def _case(prefix: str) -> pt.Case:
    return next(c for c in pt.CASES if c.name.startswith(prefix))


def test_a_current_kernel_is_called_as_a_function(tmp_path):
    with nki_namespace(shadow=True):
        mod = _module(tmp_path, "transpose2d_nki_kernels", CURRENT)
        pt.run_case(_case("transpose2d 5x3x4"), mod, "current", 0)


def test_a_legacy_kernel_with_an_output_argument_gets_one(tmp_path):
    with nki_namespace(shadow=True):
        mod = _module(tmp_path, "average_pool2d_nki_kernels", LEGACY_OUT_ARG)
        pt.run_case(_case("avgpool2d 2x10x10/2"), mod, "legacy", 0)


def test_a_wrong_result_is_a_mismatch(tmp_path):
    wrong = CURRENT.replace("src=t[:, :, j]", "src=t[:, :, 0]")
    with nki_namespace(shadow=True):
        mod = _module(tmp_path, "transpose2d_nki_kernels", wrong)
        with pytest.raises(AssertionError):
            pt.run_case(_case("transpose2d 5x3x4"), mod, "current", 0)


def test_the_mamba_golden_is_the_selective_scan():
    args, _, y = pt._mamba(1, 2, 3, 2)(np.random.default_rng(0))
    delta, u, a, b, c = args
    h = np.zeros(2)
    for t in range(3):  # channel 1 step by step
        h = np.exp(delta[0, 1, t] * a[1]) * h + delta[0, 1, t] * b[0, :, t] * u[0, 1, t]
        assert np.isclose(y[0, 1, t], (h * c[0, :, t]).sum(), rtol=1e-5)


def test_matmul_and_pool_goldens():
    (lhs_t, rhs), _, ref = pt._matmul(8, 4, 6)(np.random.default_rng(1))
    assert ref.shape == (8, 6)
    np.testing.assert_allclose(ref, lhs_t.astype(np.float32).T @ rhs.astype(np.float32))
    (x,), kw, pooled = pt._avgpool(1, 4, 4, 2)(np.random.default_rng(2))
    assert kw == {"pool_size": 2}
    assert np.isclose(pooled[0, 0, 0], x.astype(np.float32)[0, :2, :2].mean())


EXAMPLES = """
import nki
import nki.language as nl


@nki.jit
def tensor_exp_kernel_(in_tensor):
    out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    nl.store(out[0:ROWS, :], value=nl.exp(nl.load(in_tensor[0:ROWS, :])))
    return out


@nki.jit
def tensor_split_kernel_(in_tensor):
    p, f = in_tensor.shape
    even = nl.ndarray((p, f - f // 2), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    odd = nl.ndarray((p, f // 2), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    t = nl.load(in_tensor)
    nl.store(even, value=t[:, 0:f:2])
    nl.store(odd, value=ODD)
    return even, odd
"""


def _examples(tmp_path, rows: str = "in_tensor.shape[0]", odd: str = "t[:, 1:f:2]"):
    text = EXAMPLES.replace("ROWS", rows).replace("ODD", odd)
    return _module(tmp_path, "examples_under_test", text)


def test_a_case_of_several_outputs_compares_each(tmp_path):
    with nki_namespace(shadow=True):
        pt.run_case(_case("index-case-1 split"), _examples(tmp_path), "current", 0)
        wrong = _examples(tmp_path, odd="nl.add(t[:, 1:f:2], 1.0)")  # the second output off
        with pytest.raises(AssertionError):
            pt.run_case(_case("index-case-1 split"), wrong, "current", 0)


def test_a_documented_violation_matches_only_when_raised(tmp_path):
    case = _case("layout-violation")
    assert case.expect == "C2N3002"
    with nki_namespace(shadow=True):
        pt.run_case(case, _examples(tmp_path), "current", 0)  # 256 partitions: C2N3002
        legal = dataclasses.replace(case, build=pt._exp(128, 512))
        with pytest.raises(AssertionError, match="was not raised"):
            pt.run_case(legal, _examples(tmp_path), "current", 0)


def test_exp_split_and_maxpool_goldens():
    (x,), _, ref = pt._exp(4, 8)(np.random.default_rng(3))
    np.testing.assert_allclose(ref, np.exp(x.astype(np.float32)))
    (x,), _, (even, odd) = pt._split(3, 5)(np.random.default_rng(4))
    assert even.shape == (3, 3) and odd.shape == (3, 2) and even[1, 1] == x[1, 2]
    (x, k), _, pooled = pt._maxpool(2, 4, 6, 2)(np.random.default_rng(5))
    assert k == 2 and pooled.shape == (2, 2, 3)
    assert pooled[1, 1, 2] == x.astype(np.float32)[1, 2:4, 4:6].max()
