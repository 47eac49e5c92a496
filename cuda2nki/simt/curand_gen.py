"""The cuRAND device generators on NumPy words, one state per element (all threads at once).

The algorithms are those cuRAND documents for its device API:

* **XORWOW** (Marsaglia's xorshift with a Weyl sequence): five 32-bit words ``v`` and a counter
  ``d``.  ``curand_init(seed, subsequence, offset)`` salts the seed into the published start
  state, then skips ``subsequence * 2**67 + offset`` draws.  The ``v`` part of one draw is a
  linear map over GF(2); a skip of ``n`` draws applies that map's ``n``-th power, built here by
  repeated squaring of the 160 x 160 bit matrix (the library ships the same powers as tables),
  and adds ``362437 * n`` to ``d`` (a multiple of ``2**32`` for whole subsequences).
* **Philox4x32-10** (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"): a 128-bit
  counter, a 64-bit key (the seed), ten rounds; four words per counter value, handed out one at
  a time; a subsequence is ``2**66`` draws (the counter's upper half).
* **Sobol32** (Gray-code order): ``x`` XOR the direction vector of the lowest zero bit of ``i``.

The conversions: ``curand_uniform`` is ``x * 2**-32 + 2**-33`` in float, ``curand_uniform_double``
joins two draws into 53 bits, ``curand_normal`` is the Box-Muller pair of two draws (the second
kept in the state for the next call).  Integer draws and uniforms are bit-exact; the normals go
through ``logf`` and ``__sincosf`` and so match a GPU to a few ulp, not bitwise.
"""

from __future__ import annotations

from functools import cache

import numpy as np

U32, U64 = np.uint32, np.uint64
_MASK32 = 0xFFFFFFFF
WEYL = 362437
SEQUENCE_SPACING = 67  # XORWOW subsequences are 2**67 draws apart

# layouts (word offsets) of the states, as curand_kernel.h lays them out
XW_D, XW_V, XW_FLAG, XW_FLAG_D, XW_EXTRA, XW_EXTRA_D = 0, 1, 6, 7, 8, 10
PH_CTR, PH_OUT, PH_KEY, PH_STATE, PH_FLAG, PH_FLAG_D, PH_EXTRA, PH_EXTRA_D = (
    0,
    4,
    8,
    10,
    11,
    12,
    13,
    14,
)
SB_I, SB_X, SB_C, SB_DIR = 0, 1, 2, 3


def words(lanes, width: int, *like) -> list[np.ndarray]:
    """The state's words as uint32 arrays of one common shape, that of ``like`` values too
    (copies, safe to update)."""
    shape = np.broadcast_shapes(*(np.shape(x) for x in (*lanes[:width], *like)))
    return [np.array(np.broadcast_to(np.asarray(x).astype(U32), shape)) for x in lanes[:width]]


# ------------------------------------------------------------------------------------ XORWOW


def _xorwow_v_step(state: int) -> int:
    """One draw's effect on the 160-bit ``v`` part packed in an int (word ``j`` at bit 32j)."""
    v = [(state >> (32 * j)) & _MASK32 for j in range(5)]
    t = v[0] ^ (v[0] >> 2)
    new4 = (v[4] ^ (v[4] << 4) ^ t ^ (t << 1)) & _MASK32
    out = [v[1], v[2], v[3], v[4], new4]
    return sum(w << (32 * j) for j, w in enumerate(out))


def _apply(cols: tuple[int, ...], x: int) -> int:
    """The matrix with columns ``cols`` times the bit vector ``x``."""
    acc = 0
    i = 0
    while x:
        if x & 1:
            acc ^= cols[i]
        x >>= 1
        i += 1
    return acc


@cache
def _power_of_two(k: int) -> tuple[int, ...]:
    """Columns of the one-draw matrix raised to ``2**k``."""
    if k == 0:
        return tuple(_xorwow_v_step(1 << i) for i in range(160))
    half = _power_of_two(k - 1)
    return tuple(_apply(half, c) for c in half)


@cache
def _byte_table(k: int) -> np.ndarray:
    """``A**(2**k)`` as 20 lookup tables (one per state byte) of 256 five-word results."""
    cols = _power_of_two(k)
    tab = np.zeros((20, 256, 5), U32)
    for byte in range(20):
        ints = [0] * 256
        for b in range(1, 256):
            low = (b & -b).bit_length() - 1
            ints[b] = ints[b & (b - 1)] ^ cols[8 * byte + low]
        for b, val in enumerate(ints):
            tab[byte, b] = [(val >> (32 * j)) & _MASK32 for j in range(5)]
    return tab


def _jump(v: list[np.ndarray], k: int, mask: np.ndarray) -> list[np.ndarray]:
    """Apply ``A**(2**k)`` to the states where ``mask`` holds."""
    tab = _byte_table(k)
    out = np.zeros(v[0].shape + (5,), U32)
    for byte in range(20):
        w = v[byte // 4]
        idx = ((w >> U32(8 * (byte % 4))) & U32(0xFF)).astype(np.intp)
        out ^= tab[byte][idx]
    return [np.where(mask, out[..., j], v[j]) for j in range(5)]


def xorwow_skip(v: list[np.ndarray], n: np.ndarray, shift: int = 0) -> list[np.ndarray]:
    """Skip ``n * 2**shift`` draws of the ``v`` part (``n`` a uint64 array)."""
    n = np.asarray(n, U64)
    for bit in range(64):
        mask = ((n >> U64(bit)) & U64(1)).astype(bool)
        if mask.any():
            v = _jump(v, bit + shift, mask)
    return v


def xorwow_init(seed, subsequence, offset) -> list[np.ndarray]:
    """The 12 words of ``curand_init(seed, subsequence, offset, &state)``."""
    seed, subsequence, offset = np.broadcast_arrays(
        np.asarray(seed, U64), np.asarray(subsequence, U64), np.asarray(offset, U64)
    )
    with np.errstate(over="ignore"):
        s0 = (seed & U64(_MASK32)).astype(U32) ^ U32(0xAAD26B49)
        s1 = (seed >> U64(32)).astype(U32) ^ U32(0xF7DCEFDD)
        t0 = U32(1099087573) * s0
        t1 = U32(2591861531) * s1
        d = U32(6615241) + t1 + t0
        v = [U32(123456789) + t0, U32(362436069) ^ t0, U32(521288629) + t1]
        v += [U32(88675123) ^ t1, U32(5783321) + t0]
        v = [np.asarray(x, U32) for x in v]
        v = xorwow_skip(v, subsequence, SEQUENCE_SPACING)
        v = xorwow_skip(v, offset)
        d = d + U32(WEYL) * (offset & U64(_MASK32)).astype(U32)
    zero = np.zeros_like(d)
    return [np.asarray(d, U32), *v] + [zero.copy() for _ in range(6)]


def xorwow_next(w: list[np.ndarray]) -> np.ndarray:
    """One draw: updates the words in place, returns the 32-bit output."""
    v = w[XW_V : XW_V + 5]
    t = v[0] ^ (v[0] >> U32(2))
    new4 = (v[4] ^ (v[4] << U32(4))) ^ (t ^ (t << U32(1)))
    w[XW_V : XW_V + 5] = [v[1], v[2], v[3], v[4], new4]
    with np.errstate(over="ignore"):
        w[XW_D] = w[XW_D] + U32(WEYL)
        return new4 + w[XW_D]


def xorwow_skipahead(w: list[np.ndarray], n, sequences: bool) -> None:
    """``skipahead(n, &s)`` / ``skipahead_sequence(n, &s)`` in place."""
    n = np.broadcast_to(np.asarray(n, U64), w[0].shape)
    v = xorwow_skip(w[XW_V : XW_V + 5], n, SEQUENCE_SPACING if sequences else 0)
    w[XW_V : XW_V + 5] = v
    if not sequences:
        with np.errstate(over="ignore"):
            w[XW_D] = w[XW_D] + U32(WEYL) * (n & U64(_MASK32)).astype(U32)


# ------------------------------------------------------------------------------------ Philox

_M0, _M1 = U64(0xD2511F53), U64(0xCD9E8D57)
_W0, _W1 = U32(0x9E3779B9), U32(0xBB67AE85)


def philox4x32_10(ctr: list[np.ndarray], key: list[np.ndarray]) -> list[np.ndarray]:
    """Ten Philox rounds on the counter words with the key words."""
    c = [np.asarray(x, U32) for x in ctr]
    k0, k1 = (np.asarray(x, U32) for x in key)
    with np.errstate(over="ignore"):
        for r in range(10):
            p0 = _M0 * c[0].astype(U64)
            p1 = _M1 * c[2].astype(U64)
            hi0, lo0 = (p0 >> U64(32)).astype(U32), p0.astype(U32)
            hi1, lo1 = (p1 >> U64(32)).astype(U32), p1.astype(U32)
            c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
            if r < 9:
                k0, k1 = k0 + _W0, k1 + _W1
    return c


def _incr(ctr: list[np.ndarray], n) -> None:
    """The counter plus ``n`` (uint64), carried as the library carries it."""
    n = np.broadcast_to(np.asarray(n, U64), ctr[0].shape)
    nlo, nhi = (n & U64(_MASK32)).astype(U32), (n >> U64(32)).astype(U32)
    with np.errstate(over="ignore"):
        x = ctr[0] + nlo
        nhi = nhi + (x < nlo).astype(U32)
        y = ctr[1] + nhi
        go = ~(nhi <= y)
        z = ctr[2] + go.astype(U32)
        w = ctr[3] + (go & (z == 0)).astype(U32)
    ctr[:] = [x, y, z, w]


def _incr_one(ctr: list[np.ndarray]) -> None:
    with np.errstate(over="ignore"):
        carry = np.ones_like(ctr[0], dtype=bool)
        for i in range(4):
            nxt = ctr[i] + carry.astype(U32)
            carry = carry & (nxt == 0)
            ctr[i] = nxt


def _incr_hi(ctr: list[np.ndarray], n) -> None:
    n = np.broadcast_to(np.asarray(n, U64), ctr[0].shape)
    nlo, nhi = (n & U64(_MASK32)).astype(U32), (n >> U64(32)).astype(U32)
    with np.errstate(over="ignore"):
        z = ctr[2] + nlo
        nhi = nhi + (z < nlo).astype(U32)
        ctr[2], ctr[3] = z, ctr[3] + nhi


def _philox_refresh(w: list[np.ndarray]) -> None:
    ctr, key = w[PH_CTR : PH_CTR + 4], w[PH_KEY : PH_KEY + 2]
    w[PH_OUT : PH_OUT + 4] = philox4x32_10(ctr, key)


def philox_skipahead(w: list[np.ndarray], n, sequences: bool) -> None:
    """``skipahead`` (``n`` draws) / ``skipahead_sequence`` (``n * 2**66``) in place."""
    ctr = w[PH_CTR : PH_CTR + 4]
    n = np.broadcast_to(np.asarray(n, U64), w[0].shape)
    if sequences:
        _incr_hi(ctr, n)
    else:
        st = w[PH_STATE] + (n & U64(3)).astype(U32)
        blocks = n // U64(4) + (st > 3).astype(U64)
        w[PH_STATE] = np.where(st > 3, st - U32(4), st)
        _incr(ctr, blocks)
    w[PH_CTR : PH_CTR + 4] = ctr
    _philox_refresh(w)


def philox_init(seed, subsequence, offset) -> list[np.ndarray]:
    """The 16 words of ``curand_init(seed, subsequence, offset, &state)`` for Philox."""
    seed, subsequence, offset = np.broadcast_arrays(
        np.asarray(seed, U64), np.asarray(subsequence, U64), np.asarray(offset, U64)
    )
    zero = np.zeros(seed.shape, U32)
    w = [zero.copy() for _ in range(16)]
    w[PH_KEY] = (seed & U64(_MASK32)).astype(U32)
    w[PH_KEY + 1] = (seed >> U64(32)).astype(U32)
    philox_skipahead(w, subsequence, True)
    philox_skipahead(w, offset, False)
    return w


def philox_next(w: list[np.ndarray]) -> np.ndarray:
    """One draw: ``output[STATE++]``, a new block of four when the four are spent."""
    st = w[PH_STATE]
    outs = np.stack(w[PH_OUT : PH_OUT + 4])
    ret = np.take_along_axis(outs, np.minimum(st, 3).astype(np.intp)[None], 0)[0]
    st = st + U32(1)
    spent = st == 4
    if spent.any():
        ctr = list(w[PH_CTR : PH_CTR + 4])
        _incr_one(ctr)
        fresh = philox4x32_10(ctr, w[PH_KEY : PH_KEY + 2])
        for i in range(4):
            w[PH_CTR + i] = np.where(spent, ctr[i], w[PH_CTR + i])
            w[PH_OUT + i] = np.where(spent, fresh[i], w[PH_OUT + i])
        st = np.where(spent, U32(0), st)
    w[PH_STATE] = st.astype(U32)
    return np.asarray(ret, U32)


def philox_next4(w: list[np.ndarray]) -> list[np.ndarray]:
    """``curand4``: the next four draws, the state's position moved by four."""
    old = [np.asarray(x, U32) for x in w[PH_OUT : PH_OUT + 4]]
    ctr = list(w[PH_CTR : PH_CTR + 4])
    _incr_one(ctr)
    w[PH_CTR : PH_CTR + 4] = ctr
    _philox_refresh(w)
    seq = np.stack(old + [np.asarray(x, U32) for x in w[PH_OUT : PH_OUT + 4]])
    st = w[PH_STATE].astype(np.intp)
    return [np.take_along_axis(seq, (st + i)[None], 0)[0] for i in range(4)]


# ------------------------------------------------------------------------------------ Sobol32


def sobol_skipahead(w: list[np.ndarray], n) -> None:
    """``skipahead(n, &s)``: ``x`` rebuilt from the Gray code of the new position."""
    with np.errstate(over="ignore"):
        i = w[SB_I] + np.asarray(n, U64).astype(U32)
    gray = i ^ (i >> U32(1))
    x = np.array(w[SB_C], U32)
    for k in range(32):
        x = np.where((gray >> U32(k)) & U32(1) != 0, x ^ w[SB_DIR + k], x)
    w[SB_I], w[SB_X] = i, x


def sobol_init(directions: list[np.ndarray], offset) -> list[np.ndarray]:
    shape = np.broadcast_shapes(np.shape(offset), *(np.shape(d) for d in directions))
    zero = np.zeros(shape, U32)
    w = [zero.copy() for _ in range(3)] + [
        np.broadcast_to(d, shape).astype(U32) for d in directions
    ]
    sobol_skipahead(w, offset)
    return w


def sobol_next(w: list[np.ndarray]) -> np.ndarray:
    res = np.array(w[SB_X], U32)
    i = w[SB_I]
    low = np.zeros(i.shape, np.intp) + 31
    inv = ~i
    for k in range(31, -1, -1):  # the lowest zero bit of i (31 when there is none)
        low = np.where((inv >> U32(k)) & U32(1) != 0, k, low)
    dirs = np.stack(w[SB_DIR : SB_DIR + 32])
    w[SB_X] = res ^ np.take_along_axis(dirs, low[None], 0)[0]
    with np.errstate(over="ignore"):
        w[SB_I] = i + U32(1)
    return res


# ------------------------------------------------------------------------------- conversions

INV32 = np.float32(2.0**-32)
INV32_2PI = np.float32(np.float32(2.3283064e-10) * np.float32(6.2831855))


def uniform(x: np.ndarray) -> np.ndarray:
    """``x * 2**-32 + 2**-32 / 2`` in float (the product is exact, so fused or not agree)."""
    return np.asarray(x, U32).astype(np.float32) * INV32 + np.float32(INV32 / np.float32(2))


def uniform_double(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Two draws joined into 53 bits: ``(x ^ y << 21) * 2**-53 + 2**-54``."""
    z = np.asarray(x, U32).astype(U64) ^ (np.asarray(y, U32).astype(U64) << U64(21))
    return z.astype(np.float64) * 2.0**-53 + 2.0**-54


def uniform_double32(x: np.ndarray) -> np.ndarray:
    """One draw as a double (the Sobol32 form): ``x * 2**-32 + 2**-33``."""
    return np.asarray(x, U32).astype(np.float64) * 2.0**-32 + 2.0**-33


def box_muller(x: np.ndarray, y: np.ndarray, log, sincos) -> tuple[np.ndarray, np.ndarray]:
    """The Box-Muller pair of two draws; ``log`` and ``sincos`` are the float functions the
    GPU uses (``logf``, ``__sincosf``), given by the interpreter."""
    u = uniform(x)
    # `y * C + C / 2` with the multiply-add fused, as nvcc compiles it
    yf = np.asarray(y, U32).astype(np.float32).astype(np.float64)
    v = (yf * np.float64(INV32_2PI) + np.float64(INV32_2PI / np.float32(2))).astype(np.float32)
    s = np.sqrt(np.float32(-2.0) * log(u)).astype(np.float32)
    sn, cs = sincos(v)
    return (sn * s).astype(np.float32), (cs * s).astype(np.float32)


def box_muller_double(x0, x1, y0, y1, log, sincospi) -> tuple[np.ndarray, np.ndarray]:
    """The double Box-Muller pair of four draws (53-bit uniforms, ``sincospi`` of the angle)."""
    u = uniform_double(x0, x1)
    zy = np.asarray(y0, U32).astype(U64) ^ (np.asarray(y1, U32).astype(U64) << U64(21))
    v = zy.astype(np.float64) * 2.0**-52 + 2.0**-53
    s = np.sqrt(-2.0 * log(u))
    sn, cs = sincospi(v)
    return sn * s, cs * s


def normal_icdf(x: np.ndarray, erfcinv) -> np.ndarray:
    """The inverse-CDF normal of one draw (Sobol32): mirrored about the middle, then
    ``-sqrt(2) * erfcinvf(2p)``."""
    x = np.asarray(x, U32)
    high = x > U32(0x80000000)
    x = np.where(high, U32(M32_MAX) - x, x)
    s = np.where(high, np.float32(1.4142135), np.float32(-1.4142135)).astype(np.float32)
    p = uniform(x)
    return (s * erfcinv(np.float32(2.0) * p)).astype(np.float32)


M32_MAX = _MASK32


def f64_words(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A double as its low and high 32-bit words."""
    b = np.asarray(x, np.float64).view(U64)
    return (b & U64(_MASK32)).astype(U32), (b >> U64(32)).astype(U32)


def words_f64(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    b = np.asarray(lo, U32).astype(U64) | (np.asarray(hi, U32).astype(U64) << U64(32))
    return b.view(np.float64)


def f32_bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(U32)


def bits_f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, U32).view(np.float32)
