"""Unions, anonymous members and bit-fields: held in their bytes, laid out as GCC does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

PACKED = {
    "tag": (
        "union PackedShorts { struct __align__(8) { short lo; short hi; }; unsigned int word; };",
        "PackedShorts",
        ("lo", "hi", "word"),
    ),
    "typedef": (
        "typedef union { unsigned int bits; struct { short a, b; }; } Pair16;",
        "Pair16",
        ("a", "b", "bits"),
    ),
    "word-first": (
        "union U2 { unsigned int w; struct { short first; short second; } ; double pad; };",
        "U2",
        ("first", "second", "w"),
    ),
}


def _packed_kernel(decl: str, name: str, lo: str, hi: str, word: str) -> str:
    return f"""{decl}
__device__ int low_of(unsigned int v) {{ {name} p; p.{word} = v; return p.{lo}; }}
__global__ void unpack(const unsigned int* x, int* out, unsigned int* back) {{
    int t = threadIdx.x;
    {name} s;
    s.{word} = x[t];
    out[3 * t] = s.{lo};
    out[3 * t + 1] = s.{hi};
    {name} c = s;
    c.{hi} = (short)(c.{hi} + 7);
    out[3 * t + 2] = low_of(x[t]);
    back[t] = c.{word};
}}
"""


@pytest.mark.parametrize("spelling", sorted(PACKED))
def test_union_of_packed_shorts(tmp_path: Path, spelling: str) -> None:
    decl, name, (lo, hi, word) = PACKED[spelling]
    path = tmp_path / "k.cu"
    path.write_text(_packed_kernel(decl, name, lo, hi, word))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.array([0x00030002, 0xFFFE8001, 0x7FFF0000], np.uint32)
    got = run_kernel(
        tu,
        "unpack",
        grid=(1,),
        block=(3,),
        args={"x": x, "out": np.zeros(9, np.int32), "back": np.zeros(3, np.uint32)},
    )
    halves = x.view(np.int16).reshape(3, 2)
    want = np.stack([halves[:, 0], halves[:, 1], halves[:, 0]], axis=1).reshape(-1)
    np.testing.assert_array_equal(got["out"], want)
    bumped = halves.copy()
    bumped[:, 1] += 7
    np.testing.assert_array_equal(got["back"], bumped.reshape(-1).view(np.uint32))


def test_unions_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """union Cell { struct { unsigned short key; short val; }; float f; };
__global__ void touch(Cell* cells, int* out) {
    int t = threadIdx.x;
    out[t] = cells[t].key + cells[t].val;
    cells[t].val = -1;
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    cells = np.array([[1, 2], [300, -5]], np.int16)
    raw = cells.view(np.uint8).reshape(-1).copy()
    got = run_kernel(
        tu, "touch", grid=(1,), block=(2,), args={"cells": raw, "out": np.zeros(2, np.int32)}
    )
    np.testing.assert_array_equal(got["out"], [3, 295])
    after = got["cells"].view(np.int16).reshape(2, 2)
    np.testing.assert_array_equal(after, [[1, -1], [300, -1]])


# bit-field structs, the values written and the bytes GCC lays them out in (x86-64, LSB first)
BITS = {
    "straddle": (
        "struct S { char x; int y : 30; int z : 4; };",
        {"x": 1, "y": -1, "z": 5},
        [1, 0, 0, 0, 255, 255, 255, 63, 5, 0, 0, 0],
    ),
    "bytes": (
        "struct S { unsigned char p : 4; unsigned char q : 6; short r; };",
        {"p": 9, "q": 33, "r": -2},
        [9, 33, 254, 255],
    ),
    "wide": (
        "struct S { unsigned long long a : 40; unsigned b : 30; };",
        {"a": 0x123456789A, "b": 0x3FFFFFFE},
        [154, 120, 86, 52, 18, 0, 0, 0, 254, 255, 255, 63, 0, 0, 0, 0],
    ),
    "zero-width": (
        "struct S { unsigned k : 3; int d : 5; unsigned : 0; unsigned short c : 12; };",
        {"k": 6, "d": -3, "c": 4097},  # 4097 wraps to 1 in 12 bits
        [6 | (29 << 3), 0, 0, 0, 1, 0, 0, 0],
    ),
}


@pytest.mark.parametrize("spelling", sorted(BITS))
def test_bit_fields_are_laid_out_as_gcc_does(tmp_path: Path, spelling: str) -> None:
    decl, values, raw = BITS[spelling]
    n = len(raw)
    sets = " ".join(f"u.s.{k} = {v};" for k, v in values.items())
    path = tmp_path / "k.cu"
    path.write_text(
        f"""{decl}
union View {{ S s; unsigned char raw[{n}]; }};
__global__ void lay(unsigned char* out) {{
    View u;
    for (int i = 0; i < {n}; i++) u.raw[i] = 0;
    {sets}
    for (int i = 0; i < {n}; i++) out[i] = u.raw[i];
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(tu, "lay", grid=(1,), block=(1,), args={"out": np.zeros(n, np.uint8)})
    np.testing.assert_array_equal(got["out"], raw)


def test_bit_fields_read_back_signed_and_compound(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """struct Flags { unsigned kind : 3; int delta : 5; unsigned short count : 12; };
__global__ void flags(const int* d, int* out) {
    int t = threadIdx.x;
    Flags f;
    f.kind = t;
    f.delta = d[t];
    f.count = 100;
    f.delta += 2;
    f.count |= 3;
    f.kind ^= 1;
    out[3 * t] = f.kind;
    out[3 * t + 1] = f.delta;
    out[3 * t + 2] = f.count;
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    d = np.array([-16, 13, 14, 0], np.int32)
    got = run_kernel(
        tu, "flags", grid=(1,), block=(4,), args={"d": d, "out": np.zeros(12, np.int32)}
    )["out"].reshape(4, 3)
    delta = ((d + 2 + 16) % 32) - 16  # a signed 5-bit field wraps
    np.testing.assert_array_equal(got[:, 0], np.arange(4) ^ 1)
    np.testing.assert_array_equal(got[:, 1], delta)
    np.testing.assert_array_equal(got[:, 2], [103] * 4)


def test_a_union_initialised_by_a_list_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """union W { unsigned int u; float f; };
__global__ void k(float* out) {
    W w = {1u};
    out[0] = w.f;
}
"""
    )
    tu = parse_file(path)
    d = tu.rejected["k"][0]
    assert d.code == "C2N1025" and d.loc.line == 3


@pytest.mark.parametrize(
    "helpers",
    [
        "__device__ int hi_of(PackedShorts p) { return p.hi; }\n"
        "__device__ PackedShorts swap(PackedShorts p) {\n"
        "    PackedShorts q; q.lo = p.hi; q.hi = p.lo; return q; }\n",
        "__device__ __forceinline__ int hi_of(const PackedShorts v) { int h = v.hi; return h; }\n"
        "__device__ PackedShorts swap(PackedShorts v) {\n"
        "    short t = v.lo; v.lo = v.hi; v.hi = t; return v; }\n",
    ],
)
def test_unions_passed_and_returned_by_value(tmp_path: Path, helpers: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        "union PackedShorts { struct { short lo; short hi; }; unsigned int word; };\n"
        + helpers
        + """__global__ void k(const unsigned int* x, int* out, unsigned int* sw) {
    PackedShorts s;
    s.word = x[threadIdx.x];
    out[threadIdx.x] = hi_of(s);
    PackedShorts r = swap(s);
    sw[threadIdx.x] = r.word;
    out[2 + threadIdx.x] = s.lo;  // the callee changed its own copy
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.array([0x00030002, 0xFFFE8001], np.uint32)
    got = run_kernel(
        tu,
        "k",
        grid=(1,),
        block=(2,),
        args={"x": x, "out": np.zeros(4, np.int32), "sw": np.zeros(2, np.uint32)},
    )
    halves = x.view(np.int16).reshape(2, 2)
    np.testing.assert_array_equal(got["out"], [*halves[:, 1], *halves[:, 0]])
    np.testing.assert_array_equal(got["sw"], halves[:, ::-1].copy().reshape(-1).view(np.uint32))
