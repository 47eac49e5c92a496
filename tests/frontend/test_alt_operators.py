"""C++ alternative operator tokens (``not``, ``and``, ``bitand``, ...) mean their operators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.frontend.altops import respell
from cuda2nki.simt import run_kernel

# (device expression over ints a, b; the same in NumPy over int32 arrays)
SPELLINGS = {
    "not": ("(not (a > b)) ? 1 : 0", lambda a, b: (~(a > b)).astype(np.int32)),
    "and_or": ("(a > 2 and b < 5) or a == 0", lambda a, b: ((a > 2) & (b < 5)) | (a == 0)),
    "not_eq": ("a not_eq b", lambda a, b: a != b),
    "bit_ops": ("(a bitand 6) bitor (b xor 3)", lambda a, b: (a & 6) | (b ^ 3)),
    "compl": ("compl a", lambda a, b: ~a),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_alternative_tokens_in_expressions(tmp_path: Path, spelling: str) -> None:
    expr, want = SPELLINGS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(
        f"""__global__ void alt(const int* xs, const int* ys, int* res, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n and not (i >= n)) {{ int a = xs[i], b = ys[i]; res[i] = {expr}; }}
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    a = np.array([0, 1, 3, 4, 7, 2, 9], np.int32)
    b = np.array([0, 4, 3, 6, 1, 2, 8], np.int32)
    got = run_kernel(
        tu,
        "alt",
        grid=(2,),
        block=(4,),
        args={"xs": a, "ys": b, "res": np.zeros(7, np.int32), "n": 7},
    )["res"]
    np.testing.assert_array_equal(got, np.asarray(want(a, b), np.int32))


def test_compound_assignments(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """__global__ void acc(unsigned* flags, int n) {
    int t = threadIdx.x;
    if (t >= n) return;
    unsigned f = flags[t];
    f and_eq 0xF0u; f or_eq 1u; f xor_eq 0x10u;
    flags[t] = f;
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    f = np.array([0x00, 0x1F, 0xF3, 0x35], np.uint32)
    got = run_kernel(tu, "acc", grid=(1,), block=(4,), args={"flags": f.copy(), "n": 4})["flags"]
    np.testing.assert_array_equal(got, ((f & 0xF0) | 1) ^ 0x10)


def test_respell_keeps_columns_literals_and_comments() -> None:
    src = "x = a and not b; s = \"a and b\"; c = '^'; // not this\n/* or */ y = p bitor q;"
    got = respell(src)
    assert len(got) == len(src)
    assert got.startswith("x = a &&  !   b;")
    assert '"a and b"' in got and "// not this" in got and "/* or */" in got
    assert "y = p |     q;" in got
    assert respell("operand = not_a_token; andy = nota;") == "operand = not_a_token; andy = nota;"
