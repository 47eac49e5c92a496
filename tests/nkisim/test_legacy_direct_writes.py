"""Legacy ``t[...] = <instruction>`` written straight into ``t`` (``nkisim/fastpath.py``), and
the ``nl`` op fast paths: the same outputs, trace records, warnings and SBUF accounting as the
general path (a result tile copied into ``t``), which the tests force by disabling them."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from cuda2nki.nkisim import fastpath, language, load_kernel, simulate_kernel, tensor

LEGACY = """
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np


def helper(x):
    r = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    r[...] = nl.exp(x)
    return r


@nki.jit
def k(a, b):
    out = nl.ndarray((128, 48), nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
    acc = nl.zeros((128, 8), nl.float32, buffer=nl.sbuf)
    hb = nl.ndarray((128, 8), nl.bfloat16, buffer=nl.sbuf)
    big = nl.ndarray((128, 16), nl.float32, buffer=nl.sbuf)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(8)[None, :]
    for i in nl.sequential_range(3):
        u[...] = nisa.tensor_scalar(t, np.multiply, 1.5, op1=np.add, operand1=0.25)
        t[...] = nl.subtract(u, t)
        acc[...] = nl.add(acc, 2)
        acc[...] = nl.maximum(0.5, acc)
        u[...] = nisa.activation(np.tanh, t, scale=0.5)
        if i == 1:
            t[...] = nl.copy(u)
        hb[...] = nl.copy(t, dtype=nl.bfloat16)
        hb[...] = nisa.tensor_copy(hb)
        big[:, 0:8] = nl.multiply(t, u)
        v = big[:, 8:16]
        v[...] = nl.divide(t, 3.0)
        u[...] = nisa.reciprocal(acc)
        u[...] = nisa.tensor_tensor(u, t, np.multiply)
        w = helper(u)
        t[...] = nl.exp(t)
        fresh = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
        fresh[...] = nl.subtract(t, big[:, 0:8])
        acc[...] = nl.add(acc, fresh)
        u[...] = nl.multiply(w, 0.5, mask=(i_p < 64))
        e = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
        e[...] = nl.exp(nl.multiply(w, -1.0))
        c = d = nl.add(e, 1.0)
        t[...] = nisa.tensor_tensor(c, d, np.maximum)
        p = nl.zeros((128, 8), nl.float32, buffer=nl.psum)
        p[...] = nl.add(t, e)
        t[...] = nl.copy(p)
        t[i_p, i_f] = nl.multiply(t, 0.5)
    nl.store(out[:, 0:8], t)
    nl.store(out[:, 8:16], u)
    nl.store(out[:, 16:24], acc)
    nl.store(out[:, 24:32], nl.copy(hb, dtype=nl.float32))
    nl.store(out[:, 32:48], big)
    return out
"""

#: statements of the loop body written directly: tensor_scalar, subtract, add, maximum,
#: activation, the guarded copy (one iteration of three), tensor_copy (bf16), reciprocal,
#: tensor_tensor, helper's exp, exp, fresh, acc add, e's exp, tensor_tensor of c and d, copy of p
DIRECT_PER_RUN = 3 * 15 + 1


def _run(tmp_path, general: bool, monkeypatch, counts: list | None = None, **run_kw):
    path = tmp_path / "direct.py"
    path.write_text(LEGACY)
    kernel = load_kernel(path, "k")
    rng = np.random.default_rng(11)
    a = rng.uniform(0.5, 1.5, (128, 8)).astype(np.float32)
    b = rng.uniform(-1, 1, (128, 8)).astype(np.float32)
    with monkeypatch.context() as m:
        if general:
            m.setattr(fastpath, "direct_target", lambda *args: None)
            m.setattr(fastpath, "binary_f32", lambda *args: None)
            m.setattr(fastpath, "copy_plain", lambda *args: None)
            m.setattr(language, "_copy_tile", lambda *args: False)
        if counts is not None:
            real = fastpath.direct_done

            def counted(d):
                counts.append(d)
                return real(d)

            m.setattr(fastpath, "direct_done", counted)
        res = simulate_kernel(kernel, [a, b], **run_kw)
    s = res.state
    return (
        np.asarray(res.outputs),
        list(res.trace),
        [w.message for w in res.warnings],
        (s.peak_sbuf, sorted(s.ranges_sbuf), s.peak_psum_banks),
        res.writers,
        s.writers.events if s.writers is not None else None,
    )


def test_direct_writes_match_the_general_path(tmp_path, monkeypatch):
    fast = _run(tmp_path, False, monkeypatch)
    general = _run(tmp_path, True, monkeypatch)
    np.testing.assert_array_equal(fast[0], general[0])
    assert not np.isnan(fast[0]).any()
    assert fast[1] == general[1]  # engine, op, shapes, dtypes, buffers, sizes, line, extra
    assert fast[2] == general[2]
    assert fast[3] == general[3]  # peak SBUF, live ranges (the dropped result tiles included)


def test_writer_tracking_runs_take_the_general_path(tmp_path, monkeypatch):
    """With writers tracked the result tile is the instruction's recorded destination (the
    tile whose producer a store's chain names): no direct writes, the same write events."""
    counts: list = []
    fast = _run(tmp_path, False, monkeypatch, counts, track_writers=True)
    general = _run(tmp_path, True, monkeypatch, track_writers=True)
    assert counts == []
    np.testing.assert_array_equal(fast[0], general[0])
    assert fast[5] == general[5]
    for f, g in zip(fast[4], general[4]):
        np.testing.assert_array_equal(f, g)


def test_direct_writes_are_taken_where_the_statement_allows(tmp_path, monkeypatch):
    """Taken for ``t[...] = <call>`` on a whole SBUF tile of the result's shape and dtype (in a
    helper too); not for a slice, a view, a mask, ``dtype=``, a PSUM tile, a nested call's
    inner result, a chained assignment or an index expression."""
    counts: list = []
    _run(tmp_path, False, monkeypatch, counts)
    assert len(counts) == DIRECT_PER_RUN
    assert {d[3][1] for d in counts} == {
        n
        for n, line in enumerate(LEGACY.splitlines(), 1)
        if line.strip().startswith(("r[", "u[", "t[", "acc[", "fresh[", "e[", "hb[...] = nisa"))
        and "mask=" not in line
        and "i_p, i_f" not in line
    }


def _spec_of(fn):
    """``store_spec`` at each ``_probe()`` call in ``fn``."""
    found = []

    def probe():
        f = sys._getframe(1)
        found.append(fastpath.store_spec(f.f_code, f.f_lasti))
        return 0

    fn(probe)
    return found


G = np.zeros(3)


class _Sink:
    def __setitem__(self, key, value):
        pass


def test_store_spec_reads_the_statement_after_the_call():
    sink = _Sink()

    def local_store(probe):
        tile_a = sink
        tile_a[...] = probe()

    def other_name_in_a_loop(probe):
        acc_t = sink
        for _ in range(1):
            if True:
                acc_t[...] = probe()

    def global_store(probe):
        G[...] = probe()

    def closure_store(probe):
        cell = sink

        def inner():
            cell[...] = probe()

        inner()
        return cell

    def not_whole(probe):
        t = sink
        t[0:4] = probe()
        t[:, :] = probe()
        t[0] = probe()

    def nested_and_chained(probe):
        t = sink
        t[...] = abs(probe())
        x = t[...] = probe()
        y = probe()
        return x, y

    assert _spec_of(local_store) == [(0, "tile_a")]
    assert _spec_of(other_name_in_a_loop) == [(0, "acc_t")]
    assert _spec_of(global_store) == [(1, "G")]
    assert _spec_of(closure_store) == [(0, "cell")]
    assert _spec_of(not_whole) == [None, None, None]
    assert _spec_of(nested_and_chained) == [None, None, None]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum"])
@pytest.mark.parametrize("form", ["tt", "ts", "st"])
def test_nl_binary_fast_path_matches_the_general_path(name, form, monkeypatch):
    """``nl.<op>`` of fp32 tiles (current API: no ``t[...] =``) against the general path."""
    from cuda2nki.nkisim import isa as nisa

    def kernel(a):
        x = nl_load(a)
        y = nl_load(a)
        nisa.tensor_scalar(dst=y, data=x, op0=language.multiply, operand0=-0.75)
        f = getattr(language, name)
        r = f(x, y) if form == "tt" else (f(x, 3) if form == "ts" else f(-1.5, y))
        o = language.ndarray(a.shape, dtype=a.dtype, buffer=language.shared_hbm)
        nisa.dma_copy(dst=o, src=r)
        return o

    def nl_load(a):
        t = language.ndarray(a.shape, dtype=a.dtype, buffer=language.sbuf)
        nisa.dma_copy(dst=t, src=a)
        return t

    a = np.random.default_rng(3).uniform(-2, 2, (128, 6)).astype(np.float32)
    checks: list = []
    real = language._result_shape
    with monkeypatch.context() as m:
        m.setattr(language, "_result_shape", lambda *args: checks.append(1) or real(*args))
        fast = simulate_kernel(kernel, [a])
    assert checks == []  # the general path's shape and dtype checks were skipped
    with monkeypatch.context() as m:
        m.setattr(fastpath, "binary_f32", lambda *args: None)
        general = simulate_kernel(kernel, [a])
    np.testing.assert_array_equal(np.asarray(fast.outputs), np.asarray(general.outputs))
    assert list(fast.trace) == list(general.trace)


ACCUMULATE = """
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np


@nki.jit
def k(a, b):
    out = nl.ndarray((128, 1024), nl.float32, buffer=nl.shared_hbm)
    i_k = nl.arange(128)[:, None]
    i_n = nl.arange(256)[None, :]
    acc = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
    other = nl.ndarray((128, 256), nl.float32, buffer=nl.psum)
    first = True
    for k in nl.affine_range(3):
        lhs = nl.load(a[k * 128 + i_k, nl.arange(128)[None, :]])
        rhs = nl.load(b[k * 128 + i_k, i_n])
        acc += nl.matmul(lhs, rhs, transpose_x=True)
        if first:
            other[...] = nl.matmul(lhs, rhs, transpose_x=True)
            first = False
        else:
            other += nl.matmul(lhs, rhs, transpose_x=True)
    sb = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
    sb[...] = acc
    dead = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
    dead += nl.matmul(lhs, rhs, transpose_x=True)
    scratch = nl.ndarray((128, 256), nl.float32, buffer=nl.shared_hbm)
    nl.store(scratch, sb)
    nl.store(out[:, 0:256], nl.load(scratch))
    nl.store(out[:, 256:512], nl.copy(other))
    fresh = nl.ndarray((128, 256), nl.float32, buffer=nl.psum)
    fresh += nl.matmul(lhs, rhs, transpose_x=True)
    fresh += nl.matmul(lhs, rhs)
    nl.store(out[:, 512:768], nl.copy(fresh))
    half = nl.zeros((128, 128), nl.float32, buffer=nl.psum)
    half += nl.matmul(lhs, rhs[:, 0:128], transpose_x=True) + 0
    half += nl.matmul(lhs, rhs[:, 128:256], transpose_x=True)
    nl.store(out[:, 768:896], nl.copy(half))
    view = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
    part = view[:, 0:256]
    part += nl.matmul(lhs, rhs, transpose_x=True)
    nl.store(out[:, 896:1024], nl.copy(view[:, 0:128]))
    return out
"""

#: ``+=`` statements accumulated directly: acc (3 runs), other (2 of 3), dead (never read),
#: fresh (2), half (the second only: the first adds to an expression); not part (a view)
ACCUMULATED_PER_RUN = 3 + 2 + 1 + 2 + 1


def _run_acc(tmp_path, general: bool, monkeypatch, counts: list | None = None):
    path = tmp_path / "acc.py"
    path.write_text(ACCUMULATE)
    kernel = load_kernel(path, "k")
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (384, 128)).astype(np.float32)
    b = rng.uniform(-1, 1, (384, 256)).astype(np.float32)
    with monkeypatch.context() as m:
        if general:
            m.setattr(fastpath, "accumulate_target", lambda *args: None)
        if counts is not None:
            real = fastpath.accumulate_matmul

            def counted(acc, *args):
                counts.append(acc)
                return real(acc, *args)

            m.setattr(fastpath, "accumulate_matmul", counted)
        first_uid = next(tensor._UIDS) + 1
        res = simulate_kernel(kernel, [a, b])
    s = res.state
    return (
        np.asarray(res.outputs),
        [_relative_uids(ins, first_uid) for ins in res.trace],
        [w.message for w in res.warnings],
        (s.peak_psum_banks, s.peak_psum_bytes, sorted(s.ranges_psum), sorted(s.ranges_sbuf)),
    )


def _relative_uids(ins, first_uid: int):
    """A record whose DMA source keys name unnamed tensors by storage id, counted from the
    run's first (ids are unique per process)."""
    extra = tuple(
        ("src", (e[1][0] - first_uid, *e[1][1:]))
        if type(e) is tuple and e[:1] == ("src",) and type(e[1][0]) is int
        else e
        for e in ins.extra
    )
    return (*ins[:10], extra)


def test_psum_accumulation_matches_the_general_path(tmp_path, monkeypatch):
    fast = _run_acc(tmp_path, False, monkeypatch)
    general = _run_acc(tmp_path, True, monkeypatch)
    np.testing.assert_array_equal(fast[0], general[0])
    assert fast[1] == general[1]  # no memset of the zeros, no copy retargeted by ``sb[...] =``
    assert fast[2] == general[2]
    assert fast[3] == general[3]  # the dropped result tiles' PSUM live ranges (none for dead)
    # scratch (unnamed, made after the accumulations) is named by its storage id in a record:
    # the direct path takes up the ids of the result tiles it does not make
    keys = [e[1] for ins in fast[1] for e in ins[10] if type(e) is tuple and e[:1] == ("src",)]
    assert any(type(key[0]) is int for key in keys)


def test_psum_accumulation_is_direct_only_for_a_whole_psum_tile(tmp_path, monkeypatch):
    counts: list = []
    _run_acc(tmp_path, False, monkeypatch, counts)
    assert len(counts) == ACCUMULATED_PER_RUN


def test_iadd_spec_reads_the_statement_after_the_call():
    sink = [0]

    def probe_iadd(probe):
        acc_x = 0
        acc_x += probe()
        return acc_x

    def not_iadd(probe):
        t = sink
        t[0] += probe()
        y = 0
        y += probe() + 1
        y -= probe()
        y = y + probe()
        return y

    found = []

    def probe():
        f = sys._getframe(1)
        found.append(fastpath.iadd_spec(f.f_code, f.f_lasti))
        return 0

    probe_iadd(probe)
    assert found == [(0, "acc_x")]
    found.clear()
    not_iadd(probe)
    assert found == [None, None, None, None]
