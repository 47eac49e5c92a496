"""The 64-bit limb helpers of literal ports (``templates/int64_common.py.j2``), property-tested
against Python integers in the NKI simulator: every operation C defines on ``long long`` and
``unsigned long long`` that the helpers emulate gives the exact 64-bit result, for tiles and for
uniform operands, including the carries, borrows and sign bits at the limb boundary."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda2nki.codegen.render import environment
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as sim

_P, _F = 2, 3
N = _P * _F
M64 = 2**64

#: values that sit at the limb and sign boundaries, mixed with arbitrary ones
_EDGES = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, M64 - 1, 0xFFFFFFFF00000000]
WORD = st.one_of(st.sampled_from(_EDGES), st.integers(0, M64 - 1))
WORDS = st.lists(WORD, min_size=N, max_size=N)


def _tile(arr: np.ndarray, dtype):
    """A trace-time array as an on-chip tile."""
    return nl.load(nl.shared_constant(arr), dtype=dtype)


def _helpers() -> dict:
    text = "\n".join(
        environment().get_template(n).render() for n in ("int32_common.py.j2", "int64_common.py.j2")
    )
    ns: dict = {"nl": nl, "np": np, "_P": _P, "_F": _F}

    def const(values, dtype):  # the literal module's trace-time constant tile
        arr = np.broadcast_to(np.asarray(values), (_P, _F)).astype(np.int64)
        return _tile(((arr + 2**31) % 2**32 - 2**31).astype(np.int32), dtype)

    ns["_c2n_const"] = const
    exec(compile(text, "int64_common", "exec"), ns)  # noqa: S102 - our own template
    return ns


H = _helpers()


@pytest.fixture(autouse=True)
def _sim():
    sim.push(sim.SimState())
    yield
    sim.pop()


def _pair(words: list[int]):
    u = np.array(words, dtype=np.uint64).reshape(_P, _F)
    lo = (u & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
    hi = (u >> np.uint64(32)).astype(np.uint32).view(np.int32)
    return _tile(lo, nl.int32), _tile(hi, nl.int32)


def _words(pair) -> list[int]:
    lo, hi = (np.asarray(t.values()).astype(np.int64) % 2**32 for t in pair)
    return [int(a) + (int(b) << 32) for a, b in zip(lo.ravel(), hi.ravel())]


def _signed(u: int) -> int:
    return u - M64 if u >= 2**63 else u


def _values(t) -> list[float]:
    return [float(v) for v in np.asarray(t.values()).ravel()]


_ARITH = {
    "_c2n_wadd": lambda a, b: (a + b) % M64,
    "_c2n_wsub": lambda a, b: (a - b) % M64,
    "_c2n_wmul": lambda a, b: (a * b) % M64,
}
_BITS = {"bitwise_and": int.__and__, "bitwise_or": int.__or__, "bitwise_xor": int.__xor__}


@settings(max_examples=25, deadline=None)
@given(a=WORDS, b=WORDS, uniform=WORD)
@pytest.mark.parametrize("helper", sorted(_ARITH))
def test_sums_and_products_are_exact(helper, a, b, uniform) -> None:
    ref = _ARITH[helper]
    assert _words(H[helper](_pair(a), _pair(b))) == [ref(x, y) for x, y in zip(a, b)]
    assert _words(H[helper](_pair(a), uniform)) == [ref(x, uniform) for x in a]
    assert _words(H[helper](uniform, _pair(b))) == [ref(uniform, y) for y in b]


@settings(max_examples=25, deadline=None)
@given(a=WORDS, b=WORDS, uniform=WORD)
@pytest.mark.parametrize("op", sorted(_BITS))
def test_bit_operations_are_exact(op, a, b, uniform) -> None:
    ref = _BITS[op]
    assert _words(H["_c2n_wbits"](_pair(a), _pair(b), op)) == [ref(x, y) for x, y in zip(a, b)]
    assert _words(H["_c2n_wbits"](_pair(a), uniform, op)) == [ref(x, uniform) for x in a]
    assert _words(H["_c2n_wnot"](_pair(a))) == [x ^ (M64 - 1) for x in a]
    assert _words(H["_c2n_wneg"](_pair(a))) == [(-x) % M64 for x in a]


@settings(max_examples=25, deadline=None)
@given(a=WORDS, s=st.integers(0, 63))
def test_shifts_are_exact(a, s) -> None:
    assert _words(H["_c2n_wshl"](_pair(a), s)) == [(x << s) % M64 for x in a]
    assert _words(H["_c2n_wshr"](_pair(a), s, False)) == [x >> s for x in a]
    assert _words(H["_c2n_wshr"](_pair(a), s, True)) == [(_signed(x) >> s) % M64 for x in a]


_CMP = {
    "less": lambda a, b: a < b,
    "less_equal": lambda a, b: a <= b,
    "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b,
    "equal": lambda a, b: a == b,
    "not_equal": lambda a, b: a != b,
}


@settings(max_examples=20, deadline=None)
@given(a=WORDS, b=WORDS)
@pytest.mark.parametrize("op", sorted(_CMP))
def test_comparisons_are_exact(op, a, b) -> None:
    b = [y if k % 3 else x for k, (x, y) in enumerate(zip(a, b))]  # some equal pairs
    ref = _CMP[op]
    got = _values(H["_c2n_wcmp"](_pair(a), _pair(b), op, False))
    assert got == [float(ref(x, y)) for x, y in zip(a, b)]
    got = _values(H["_c2n_wcmp"](_pair(a), _pair(b), op, True))
    assert got == [float(ref(_signed(x), _signed(y))) for x, y in zip(a, b)]


@settings(max_examples=20, deadline=None)
@given(a=WORDS, b=WORDS, pick=st.lists(st.booleans(), min_size=N, max_size=N))
def test_selects_and_tests_are_exact(a, b, pick) -> None:
    mask = _tile(np.array(pick, dtype=np.float32).reshape(_P, _F), nl.float32)
    got = _words(H["_c2n_wwhere"](mask, _pair(a), _pair(b)))
    assert got == [x if p else y for x, y, p in zip(a, b, pick)]
    assert _values(H["_c2n_wnonzero"](_pair(a))) == [float(x != 0) for x in a]


@settings(max_examples=20, deadline=None)
@given(v=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=N, max_size=N))
def test_widening_extends_sign_or_zeros(v) -> None:
    t = _tile(np.array(v, dtype=np.int32).reshape(_P, _F), nl.int32)
    assert _words(H["_c2n_wide"](t, True)) == [x % M64 for x in v]
    assert _words(H["_c2n_wide"](t, False)) == [x % 2**32 for x in v]


@settings(max_examples=20, deadline=None)
@given(base=st.integers(-(2**40), 2**64), cp=st.integers(-(2**62), 2**62), cf=st.integers(0, 2**62))
def test_index_values_become_exact_pairs(base, cp, cf) -> None:
    want = [(base + cp * r + cf * c) % M64 for r in range(_P) for c in range(_F)]
    assert _words(H["_c2n_wgrid"](base, cp, cf)) == want


def _fp32(x: int) -> float:
    """C's conversion of an integer to float: rounded once, to nearest even."""
    return float(np.float32(np.float64(x))) if abs(x) < 2**53 else _fp32_big(x)


def _fp32_big(x: int) -> float:
    from fractions import Fraction

    f = float(np.float32(float(x)))  # candidates around the value, then the nearest (even) one
    cands = {f, float(np.nextafter(np.float32(f), np.float32(np.inf))),
             float(np.nextafter(np.float32(f), np.float32(-np.inf)))}  # fmt: skip
    best = min(cands, key=lambda c: (abs(Fraction(c) - x), int(np.float32(c).view(np.int32)) & 1))
    return best


@settings(max_examples=30, deadline=None)
@given(a=WORDS)
def test_conversions_to_fp32_round_once(a) -> None:
    a = [x | (1 << 40) | 0x81 if k == 0 else x for k, x in enumerate(a)]  # a tie-breaking case
    assert _values(H["_c2n_w2f"](_pair(a), False)) == [_fp32(x) for x in a]
    assert _values(H["_c2n_w2f"](_pair(a), True)) == [_fp32(_signed(x)) for x in a]


@settings(max_examples=30, deadline=None)
@given(v=st.lists(st.floats(-(2.0**62), 2.0**62, width=32), min_size=N, max_size=N))
def test_conversions_from_fp32_truncate(v) -> None:
    t = _tile(np.array(v, dtype=np.float32).reshape(_P, _F), nl.float32)
    assert _words(H["_c2n_f2w"](t)) == [int(x) % M64 for x in v]


def _cdiv(a: int, b: int) -> tuple[int, int]:
    """C's truncating division and remainder."""
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    return q, a - q * b


NONZERO = st.one_of(st.sampled_from([1, 2, 3, 2**32, 2**63, M64 - 1, 10**9 + 7]),
                    st.integers(1, M64 - 1))  # fmt: skip


@settings(max_examples=12, deadline=None)
@given(a=WORDS, d=st.lists(NONZERO, min_size=N, max_size=N), uniform=NONZERO)
def test_division_is_exact(a, d, uniform) -> None:
    q, r = H["_c2n_wdivmod"](_pair(a), _pair(d), False)
    assert _words(q) == [x // y for x, y in zip(a, d)]
    assert _words(r) == [x % y for x, y in zip(a, d)]
    q, r = H["_c2n_wdivmod"](_pair(a), uniform, False)
    assert (_words(q), _words(r)) == ([x // uniform for x in a], [x % uniform for x in a])
    sd = [_signed(y) for y in d]
    q, r = H["_c2n_wdivmod"](_pair(a), _pair(d), True)
    want = [_cdiv(_signed(x), y) for x, y in zip(a, sd)]
    assert _words(q) == [w[0] % M64 for w in want] and _words(r) == [w[1] % M64 for w in want]
    su = _signed(uniform)
    q, r = H["_c2n_wdivmod"](_pair(a), su, True)
    want = [_cdiv(_signed(x), su) for x in a]
    assert _words(q) == [w[0] % M64 for w in want] and _words(r) == [w[1] % M64 for w in want]


@pytest.mark.parametrize("factor", [0, 1, 2**5, 2**37, 2**63, M64 - 1, -1])
def test_products_by_zero_powers_of_two_and_minus_one_skip_byte_products(factor) -> None:
    """A uniform factor of 0, 2**s or -1 (an all-ones mask spread by a product) is a shift or
    a negation: exact, with none of the 36 byte-column products of a general factor."""
    a = [0, 1, 2**32 - 1, 2**63 + 5, M64 - 1, 0x0123456789ABCDEF]
    calls = []
    real = nl.multiply

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    H["nl"] = type("counted_nl", (), {"__getattr__": lambda _, k: getattr(nl, k)})()
    H["nl"].multiply = counted
    try:
        got = _words(H["_c2n_wmul"](_pair(a), factor))
    finally:
        H["nl"] = nl
    assert got == [(x * factor) % M64 for x in a]
    assert len(calls) <= 2, len(calls)  # a negation's borrow test, at most
