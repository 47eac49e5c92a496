"""``__clzll``, ``__ffsll`` and ``__brevll`` in literal ports: counted limb by limb with the
exact 32-bit helpers, bit-exact against the SIMT interpreter, for 64-bit values read from
memory, computed per thread, extended from 32-bit values, and uniform."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.literal_acceptance import run_indexed_kernel_exactly

#: words spread over every leading-zero count: small, near the limb boundary, zero, all ones
SMALL = [0, 2**40]

#: name -> (parameters, body after ``int i = ...``, {parameter: (dtype, role, range)})
KERNELS = {
    # the byte count of a delta from its leading zeros (a compressor's step), both signs
    "delta_byte_count": (
        "const long long* v, int* bytes, int n",
        "    if (i >= n) return;\n"
        "    long long prev = i > 0 ? v[i - 1] : 0;\n"
        "    unsigned long long d = v[i] >= prev ? v[i] - prev : prev - v[i];\n"
        "    int c = 8 - (__clzll(d) >> 3);\n"
        "    bytes[i] = (c == 2 ? 3 : c) + 100 * __clzll(d >> (i % 50)) + 10000 * __clzll(0ULL);\n",
        {"v": ("int64", "in", SMALL), "bytes": ("int32", "out", None)},
    ),
    # lowest set bits and reversed words of data, of 32-bit values and of constants
    "lowest_bits_and_reversal": (
        "const unsigned long long* w, const int* x, unsigned long long* r, int* p, int n",
        "    if (i < n) {\n"
        "        unsigned long long a = w[i] & ~((1ULL << (i % 64)) - 1ULL);\n"
        "        p[i] = __ffsll(a) + 70 * __ffsll((long long)x[i]) + 5000 * __ffsll(1LL << 40);\n"
        "        r[i] = __brevll(w[i]) ^ __brevll((unsigned long long)x[i]) ^ __brevll(6ULL);\n"
        "    }\n",
        {
            "w": ("uint64", "in", [0, 2**64 - 1]),
            "x": ("int32", "in", [-(2**31), 2**31 - 1]),
            "r": ("uint64", "out", None),
            "p": ("int32", "out", None),
        },  # fmt: skip
    ),
}


def _port(name: str, tmp: Path):
    return run_indexed_kernel_exactly(name, *KERNELS[name], tmp)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_wide_bit_intrinsics_port_exactly(name, tmp_path) -> None:
    run, points = _port(name, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
