"""``memcpy`` in device code: element copies between buffers of one type, and copies to or from
a struct, vector or record variable (see cuda2nki.frontend.aggcopy), run by the SIMT
interpreter; copies that reinterpret bytes are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel


def _run(tmp_path: Path, src: str, **args):
    path = tmp_path / "k.cu"
    path.write_text(src)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    return run_kernel(tu, "k", grid=(1,), block=(8,), args=args)


WORDS_TO_STRUCT = {
    "vector-members": (
        "struct P { uint4 a, b; };",
        "P s; memcpy(&s, w, sizeof(s)); o[t] = s.a.y + 100 * s.b.w;",
        lambda w: w[1] + 100 * w[7],
    ),
    "nested-prefix": (
        "struct In { unsigned lo, hi; }; struct Q { In a; In b; float f; };",
        "Q s; memcpy(&s, w, 4 * sizeof(unsigned)); o[t] = s.b.lo * 10 + s.a.hi;",
        lambda w: w[2] * 10 + w[1],
    ),
    "record-prefix-only": (
        "struct P { unsigned x, y, z; };",
        "P s; s.z = 9; memcpy(&s, w + 1, 2 * sizeof(unsigned)); o[t] = s.x + s.y + s.z;",
        lambda w: w[1] + w[2] + 9,
    ),
    "uint4-from-element-address": (
        "",
        "uint4 v; memcpy(&v, &w[4], sizeof v); o[t] = v.x + v.w;",
        lambda w: w[4] + w[7],
    ),
}


@pytest.mark.parametrize("spelling", sorted(WORDS_TO_STRUCT))
def test_memcpy_into_a_variable(tmp_path: Path, spelling: str) -> None:
    decl, body, want = WORDS_TO_STRUCT[spelling]
    src = f"""{decl}
__global__ void k(unsigned* o) {{
    int t = threadIdx.x;
    unsigned w[8];
    for (int i = 0; i < 8; i++) w[i] = (i + 1) * (t + 3);
    {body}
}}
"""
    got = _run(tmp_path, src, o=np.zeros(8, np.uint32))["o"]
    for t in range(8):
        w = [(i + 1) * (t + 3) for i in range(8)]
        assert got[t] == want(w)


def test_memcpy_out_of_variables_and_between_arrays(tmp_path: Path) -> None:
    src = """struct Pair { float x, y; };
__global__ void k(float* o, unsigned* bits) {
    int t = threadIdx.x;
    Pair p;
    p.x = t;
    p.y = 2 * t;
    float buf[2];
    memcpy(buf, &p, sizeof(p));
    o[t] = buf[0] + buf[1];
    uint4 q = make_uint4(t, t + 1, t + 2, t + 3);
    unsigned words[4];
    memcpy(words, &q, sizeof(q));
    unsigned copy[4];
    memcpy(copy, words, 3 * sizeof(unsigned));
    bits[t] = copy[2];
}
"""
    got = _run(tmp_path, src, o=np.zeros(8, np.float32), bits=np.zeros(8, np.uint32))
    np.testing.assert_array_equal(got["o"], 3 * np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(got["bits"], np.arange(8) + 2)


@pytest.mark.parametrize(
    "call, code, what",
    [
        ("memcpy(&u, &f, sizeof(float))", "C2N1030", "different element types"),
        ("memcpy(&s, &f, sizeof(float))", "C2N1030", "reinterpreting the bytes"),
        ("memcpy(w, w + 1, n)", "C2N1030", "not a constant number"),
        ("memcpy(&s, w, 6)", "C2N1025", "part of a member"),
    ],
)
def test_memcpy_refusals(tmp_path: Path, call: str, code: str, what: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""struct S {{ unsigned a; unsigned b; float c; }};
__global__ void k(unsigned* o, int n) {{
    unsigned w[4] = {{1, 2, 3, 4}};
    float f = 1.5f;
    unsigned u;
    S s;
    {call};
    o[0] = u + w[0] + s.a;
}}
"""
    )
    tu = parse_file(path)
    (d,) = tu.rejected["k"]
    assert d.code == code and d.loc.line == 7 and what in d.message, d
