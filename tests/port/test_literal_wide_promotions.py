"""64-bit operations that C's usual conversions make of 32-bit per-thread values, and 64-bit
shifts by per-thread counts, in literal ports: the 32-bit operand is extended as its own type
says (sign or zeros), the operation is computed on limb pairs, and the result wraps modulo
2**64; bit-exact against the SIMT interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.literal_acceptance import run_indexed_kernel_exactly

U64 = [0, 2**64 - 1]
I64 = [-(2**63), 2**63 - 1]
I32 = [-(2**31), 2**31 - 1]

#: name -> (parameters, body after ``int i = ...``, {parameter: (dtype, role, range)})
KERNELS = {
    # a bit of a 32-bit word spread over 64 bits by a product with an all-ones constant
    "spread_bit_by_product": (
        "const unsigned int* m, const unsigned long* w, unsigned long* o, int n",
        "    const unsigned long all = 0xFFFFFFFFFFFFFFFFUL;\n"
        "    if (i < n) o[i] = (((m[i] >> 3) & 1u) * all) & w[i];\n",
        {
            "m": ("uint32", "in", [0, 2**32 - 1]),
            "w": ("uint64", "in", U64),
            "o": ("uint64", "out", None),
        },  # fmt: skip
    ),
    # signed 32-bit values mixed with 64-bit ones: sign-extended before the sum and compare
    "signed_int_plus_long": (
        "const int* a, const long long* b, long long* c, int n",
        "    if (i < n) {\n"
        "        long long s = a[i] + b[i];\n"
        "        c[i] = (a[i] < b[i]) ? s - a[i] * 3LL : s ^ (a[i] - 1LL);\n"
        "    }\n",
        {"a": ("int32", "in", I32), "b": ("int64", "in", I64), "c": ("int64", "out", None)},
    ),
    # unsigned 32-bit values zero-extended into unsigned 64-bit bit operations
    "unsigned_into_uint64": (
        "const unsigned* a, const uint64_t* b, uint64_t* c, int n",
        "    if (i < n) c[i] = (b[i] | a[i]) - (a[i] ^ b[i]) + (uint64_t)a[i] * a[i];\n",
        {
            "a": ("uint32", "in", [0, 2**32 - 1]),
            "b": ("uint64", "in", U64),
            "c": ("uint64", "out", None),
        },  # fmt: skip
    ),
    # shifts by counts that differ between threads, both directions, signed and unsigned
    "shift_by_thread": (
        "const long long* a, const unsigned long long* u, long long* b, int n",
        "    if (i < n) {\n"
        "        int s = i % 64;\n"
        "        b[i] = (a[i] << (i % 13)) ^ (a[i] >> s) ^ (long long)(u[i] >> (63 - s));\n"
        "    }\n",
        {"a": ("int64", "in", I64), "u": ("uint64", "in", U64), "b": ("int64", "out", None)},
    ),
    # a one-bit mask at a position read from data, in a 64-bit word
    "bit_at_data_position": (
        "const int* pos, const unsigned long long* w, int* hit, unsigned long long* set, int n",
        "    if (i < n) {\n"
        "        unsigned long long bit = 1ULL << pos[i];\n"
        "        hit[i] = (w[i] & bit) != 0;\n"
        "        set[i] = w[i] | (1ull << (pos[i] ^ 7)) | ((unsigned long long)pos[i] << 40);\n"
        "    }\n",
        {
            "pos": ("int32", "in", [0, 56]),
            "w": ("uint64", "in", U64),
            "hit": ("int32", "out", None),
            "set": ("uint64", "out", None),
        },  # fmt: skip
    ),
    # counters incremented and decremented before and after use, a 32-bit flag word updated by
    # 64-bit one-bit masks (the result narrowed back to 32 bits)
    "counters_and_flag_masks": (
        "const int* d, unsigned long long* cnt, unsigned long long* tot, int n",
        "    if (i < n) {\n"
        "        unsigned long long c = 0xfffffffffffffffeULL, t = 0ULL;\n"
        "        unsigned int flag = 0;\n"
        "        for (int k = 0; k < 4; ++k) {\n"
        "            int v = (d[i] >> (5 * k)) & 31;\n"
        "            if (v & 1) { ++c; t += c++; } else { c--; --t; }\n"
        "            flag |= (1ULL << v);\n"
        "            if (v > 20) flag &= ~(1ULL << (v - 16));\n"
        "        }\n"
        "        cnt[i] = c;\n        tot[i] = t ^ flag;\n"
        "    }\n",
        {
            "d": ("int32", "in", [0, 2**30]),
            "cnt": ("uint64", "out", None),
            "tot": ("uint64", "out", None),
        },  # fmt: skip
    ),
    # a 32-bit value shifted by a 64-bit count: the shift stays 32-bit
    "int_shifted_by_a_wide_count": (
        "const unsigned* x, const long long* c, unsigned* y, int n",
        "    if (i < n) y[i] = (x[i] << (c[i] & 31LL)) ^ (x[i] >> (long long)(i % 32));\n",
        {
            "x": ("uint32", "in", [0, 2**32 - 1]),
            "c": ("int64", "in", [-(2**63), 2**63 - 1]),
            "y": ("uint32", "out", None),
        },  # fmt: skip
    ),
}


def _port(name: str, tmp: Path):
    return run_indexed_kernel_exactly(name, *KERNELS[name], tmp, head="#include <cstdint>\n")


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_promoted_and_shifted_wide_values_port_exactly(name, tmp_path) -> None:
    run, points = _port(name, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
