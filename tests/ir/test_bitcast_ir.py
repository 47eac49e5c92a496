"""The tile IR's bit reinterpretation: ``Bitcast`` (intent) and ``TensorBitcast`` (scheduled)
print and parse back, and evaluate to the operand's bits read as the new type."""

from __future__ import annotations

import numpy as np

from cuda2nki.ir import nodes as n
from cuda2nki.ir.bitcast import bits_as, same_width
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text

_TEXT = """kernel k(x: in float32[N], y: out int32[N], N: int32) {
  map: y[i] = bitcast(x[i], int32) >> 23 for i < N;
}"""


def test_a_bitcast_prints_and_parses_back() -> None:
    k = parse(_TEXT)
    assert to_text(parse(to_text(k))) == to_text(k)
    assert any(isinstance(e, n.Bitcast) for e in _exprs(k.body[0].expr))


def test_a_bitcast_evaluates_to_the_bits() -> None:
    x = np.array([1.0, -2.5, 3e-39, np.inf], np.float32)
    out = evaluate(parse(_TEXT), {"x": x}, {"N": 4})
    want = x.view(np.int32) >> 23
    assert np.array_equal(np.asarray(out["y"], np.int64), want.astype(np.int64))


def test_the_scheduled_bitcast_round_trips() -> None:
    v = n.View("t", ())
    s = n.TensorBitcast(v, n.View("u", ()))
    assert parse(to_text(n.Kernel("k", (), (s,)))).body == (s,)


def test_widths() -> None:
    assert same_width("float32", "uint32") and not same_width("float16", "int32")
    assert bits_as(np.float64(1.0), "float32", "int32") == 0x3F800000


def _exprs(e):  # noqa: ANN001, ANN202
    yield e
    for f in ("x", "a", "b", "cond", "body"):
        c = getattr(e, f, None)
        if isinstance(c, n.Expr):
            yield from _exprs(c)
