"""Virtual registers (``nisa.register_alloc/move/load/store``) and the loops they drive:
``nl.dynamic_range`` and ``nl.fori_loop`` with runtime bounds, ``nl.while_loop`` and a bare
``while reg:`` (the current API)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"


def run(tmp_path, body: str, inputs, name: str = "k"):
    p = tmp_path / "port.py"
    p.write_text(CUR + textwrap.dedent(body))
    return simulate_kernel(load_kernel(p, name), inputs).outputs


def fails(tmp_path, body: str, inputs, name: str = "k"):
    with pytest.raises(DiagnosticError) as ei:
        run(tmp_path, body, inputs, name)
    return ei.value.diagnostic


ROWS_ADD = """

@nki.jit
def {name}(a, b, n_tiles):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    P, F = {P}, a.shape[1]
    cnt = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=cnt, src=n_tiles)
    {reg} = nisa.register_alloc()
    nisa.register_load({reg}, cnt)
    off = 0
    for _ in nl.dynamic_range({args}):
        x = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[off:off + P, 0:F])
        nisa.dma_copy(dst=y, src=b[off:off + P, 0:F])
        nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[off:off + P, 0:F], src=x)
        off += P
    return out
"""


@pytest.mark.parametrize(
    ("name", "P", "reg", "args", "n", "rows"),
    [
        ("add_rows", 128, "trip", "trip", 2, 256),
        ("add_rows", 128, "trip", "0, trip, 1", 3, 384),
        ("add_blocks", 32, "count_reg", "count_reg", 1, 32),
        ("add_blocks", 64, "r", "r", 0, 0),
    ],
)
def test_dynamic_range_runs_the_loaded_trip_count(tmp_path, name, P, reg, args, n, rows):
    a = np.arange(512 * 8, dtype=np.float32).reshape(512, 8)
    b = np.full((512, 8), 0.5, np.float32)
    body = ROWS_ADD.format(name=name, P=P, reg=reg, args=args)
    out = run(tmp_path, body, [a, b, np.array([[n]], np.int32)], name)
    np.testing.assert_array_equal(out[:rows], a[:rows] + b[:rows])
    assert not np.array_equal(out[rows:], a[rows:] + b[rows:]) or rows == 512


def test_dynamic_range_from_a_static_start_to_a_register(tmp_path):
    body = """

@nki.jit
def k(a, hi):
    out = nl.ndarray((1, 8), dtype=nl.int32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 8), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0)
    h = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=h, src=hi)
    stop = nisa.register_alloc(h)
    for i in nl.dynamic_range(2, stop):
        nisa.memset(dst=t[0:1, i:i + 1], value=i)
    nisa.dma_copy(dst=out, src=t)
    return out
"""
    out = run(tmp_path, body, [np.zeros((1, 1), np.int32), np.array([[6]], np.int32)])
    np.testing.assert_array_equal(out, [[0, 0, 2, 3, 4, 5, 0, 0]])


def test_fori_loop_body_gets_a_register_usable_as_scalar_offset(tmp_path):
    body = """

@nki.jit
def k(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    ub = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ub, src=n)
    ub_reg = nisa.register_alloc()
    nisa.register_load(ub_reg, ub)
    zeros = nl.ndarray((1, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=zeros, value=0.0)

    def body(i):
        nisa.dma_copy(dst=out.ap([[a.shape[1], 1], [1, a.shape[1]]], scalar_offset=i), src=zeros)

    nl.fori_loop(1, ub_reg, body)
    return out
"""
    a = np.arange(6 * 4, dtype=np.float32).reshape(6, 4) + 1
    out = run(tmp_path, body, [a, np.array([[4]], np.int32)])
    want = a.copy()
    want[1:4] = 0
    np.testing.assert_array_equal(out, want)


WHILE = """

@nki.jit
def k(flags):
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    cnt = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=cnt, value=0)
    cond = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=cond, src=flags[0:1, 0:1])
    reg = nisa.register_alloc()
    nisa.register_load(reg, cond)
{loop}
    nisa.dma_copy(dst=out, src=cnt)
    return out
"""

STRUCTURED = """
    def body(r):
        nisa.tensor_scalar(dst=cnt, data=cnt, op0=nl.add, operand0=1)
        c = nisa.register_alloc()
        nisa.register_store(cond, r)
        nisa.tensor_scalar(dst=cond, data=cond, op0=nl.subtract, operand0=1)
        nisa.register_load(c, cond)
        return c

    nl.while_loop(reg, body)
"""

BARE = """
    while reg:
        nisa.tensor_scalar(dst=cnt, data=cnt, op0=nl.add, operand0=1)
        nisa.tensor_scalar(dst=cond, data=cond, op0=nl.subtract, operand0=1)
        nisa.register_load(reg, cond)
"""


@pytest.mark.parametrize("loop", [STRUCTURED, BARE], ids=["while_loop", "bare_while"])
@pytest.mark.parametrize("start", [0, 1, 5])
def test_while_loops_run_until_the_register_is_zero(tmp_path, loop, start):
    out = run(tmp_path, WHILE.format(loop=loop), [np.array([[start, 9]], np.int32)])
    assert out[0, 0] == start


def test_register_move_and_store(tmp_path):
    body = """

@nki.jit
def k(a):
    out = nl.ndarray((1, 2), dtype=nl.int32, buffer=nl.shared_hbm)
    r = nisa.register_alloc(7)
    s = nisa.register_alloc()
    nisa.register_move(s, r)
    nisa.register_move(r, 11)
    nisa.register_store(out[0:1, 0:1], r)
    nisa.register_store(out[0:1, 1:2], s)
    return out
"""
    np.testing.assert_array_equal(run(tmp_path, body, [np.zeros(1, np.int32)]), [[11, 7]])


KERNEL = """

@nki.jit
def k(a):
    t = nl.ndarray((2, 2), dtype=nl.int32, buffer=nl.sbuf)
    f = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    r = nisa.register_alloc()
    {bad}
    return a
"""


@pytest.mark.parametrize(
    ("bad", "code", "text"),
    [
        ("x = int(r)", "C2N3021", "read before a value"),
        ("nisa.register_load(r, t)", "C2N3021", "exactly one element"),
        ("nisa.register_load(r, f)", "C2N3001", "32-bit integers"),
        ("nisa.register_move(r, 2.5)", "C2N3021", "integer or a register"),
        ("nisa.register_move(r, 1); y = r * 128", "C2N3021", "only on the device"),
        ("nisa.register_move(r, 1); y = r == 1", "C2N3021", "only on the device"),
        ("nisa.register_move(r, 1); y = r < 4", "C2N3021", "only on the device"),
        ("nisa.register_move(r, 1); x = nl.dynamic_range(0, 4, r)", "C2N3021", "step"),
        ("nisa.register_move(r, 2 ** 31)", "C2N3021", "32-bit register"),
        ("nl.while_loop(3, lambda c: c)", "C2N3021", "init must be a register"),
    ],
)
def test_register_misuse_is_diagnosed_at_the_line(tmp_path, bad, code, text):
    d = fails(tmp_path, KERNEL.format(bad=bad), [np.zeros((1, 1), np.float32)])
    assert d.code == code and text in d.message
    assert d.loc.line == 11
