"""Legacy true division of integer operands (``x / y``, ``nl.divide``) without ``dtype=``
yields the float32 quotient, not the promoted integer type (ruling in
docs/simulator-rulings.md): ``nl.floor(iota / w, dtype=nl.int32)`` is the floor of the quotient,
as the public ``resize_nearest`` sample computes row indices.  With an explicit integer
``dtype=`` the quotient is written as an integer, rounded to nearest, ties to even."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"

P = 128

# spelling of the quotient of the int tile ``pos`` (0..127 + start) and the divisor ``w``
QUOTIENTS = {
    "operator": "pos / {w}",
    "nl_divide": "nl.divide(pos, {w})",
    "tile_by_tile": "pos / nl.full((128, 1), {w}, dtype={dt})",
    "keyword": "nl.divide(x=pos, y={w})",
}
DTYPES = ["nl.int32", "nl.int16", "nl.uint16"]


def _run(tmp_path, body: str, out_dtype: str = "nl.float32"):
    src = f"""
    @nki.jit
    def k(a):
        out = nl.ndarray(({P}, 1), {out_dtype}, buffer=nl.shared_hbm)
        i_p = nl.arange({P})[:, None]
{textwrap.indent(textwrap.dedent(body), " " * 8)}
        nl.store(out, value=res)
        return out
    """
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(src))
    got = simulate_kernel(load_kernel(p, "k"), [np.zeros((1,), np.float32)]).outputs
    return (got[0] if isinstance(got, (list, tuple)) else got)[:, 0]


@pytest.mark.parametrize("spelling", sorted(QUOTIENTS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("w", [38, 7])
def test_integer_quotient_is_a_float(tmp_path, spelling, dtype, w):
    q = QUOTIENTS[spelling].format(w=w, dt=dtype)
    body = f"""
    pos = nisa.iota(i_p + 5, dtype={dtype})
    quot = {q}
    assert quot.dtype == nl.float32, quot.dtype
    res = nl.copy(quot)
    """
    got = _run(tmp_path, body)
    want = ((np.arange(P) + 5) / w).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("spelling", sorted(QUOTIENTS))
def test_floor_of_the_quotient_is_floor_division(tmp_path, spelling):
    q = QUOTIENTS[spelling].format(w=38, dt="nl.int32")
    body = f"""
    pos = nisa.iota(i_p, dtype=nl.int32)
    res = nl.floor({q}, dtype=nl.int32)
    """
    got = _run(tmp_path, body, "nl.int32")
    np.testing.assert_array_equal(got, np.arange(P) // 38)


def test_an_explicit_integer_dtype_rounds_the_quotient_to_nearest_even(tmp_path):
    body = """
    pos = nisa.iota(i_p, dtype=nl.int32)
    res = nl.divide(pos, 4, dtype=nl.int32)
    """
    got = _run(tmp_path, body, "nl.int32")
    np.testing.assert_array_equal(got, np.rint(np.arange(P) / 4).astype(np.int32))


def test_float_operands_keep_their_promoted_type(tmp_path):
    body = """
    x = nl.full((128, 1), 3.0, dtype=nl.float16)
    quot = x / 2
    assert quot.dtype == nl.float16, quot.dtype
    res = nl.copy(quot, dtype=nl.float32)
    """
    np.testing.assert_array_equal(_run(tmp_path, body), np.full(P, 1.5, np.float32))
