"""A parenthesised subscript followed by a unary-looking operator (``(p[i]) + 32``,
``(w[i]) * (x[i])``, a macro's ``(c) + 32`` with ``c`` = ``s[i]``) is arithmetic on the
element, not a cast to an array type named like the variable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

# (statement writing out[i] from float arrays src/wts, the same in NumPy)
SPELLINGS = {
    "plus": ("out[i] = (src[i]) + 32.0f;", lambda s, w: s + 32),
    "minus_in_product": ("out[i] = 0.5f * (src[i]) - (wts[i]);", lambda s, w: 0.5 * s - w),
    "times": ("out[i] = (src[i]) * (wts[i]);", lambda s, w: s * w),
    "two_d_index": ("out[i] = (src[i % 4 + (i / 4) * 4]) + 1.0f;", lambda s, w: s + 1),
    "macro": ("out[i] = SHIFT(src[i]);", lambda s, w: np.where(s >= 2, s + 32, s)),
    "macro_minus": ("out[i] = BELOW(src[i]);", lambda s, w: np.where(s <= 3, s - 1 + 4, s)),
    "computed_index": (
        "int m = i % 4, r = i / 4; float a = 0.25f;\n"
        "out[i] = a * (src[(r * 4) + m]) + (1.0f - a) * (wts[(r * 4) + m]);",
        lambda s, w: 0.25 * s + 0.75 * w,
    ),
    "nested": ("out[i] = ((src[i]) + (wts[i])) * 2.0f;", lambda s, w: (s + w) * 2),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_parenthesised_subscript_is_a_value(tmp_path: Path, spelling: str) -> None:
    stmt, want = SPELLINGS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(
        f"""#define SHIFT(c) (((c) >= 2.0f) ? (c) + 32 : (c))
#define BELOW(c) ((0.0f <= (c) && (c) <= 3.0f) ? ((c) - 1.0f + 4.0f) : (c))
__global__ void k(const float* __restrict__ src, const float* wts, float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{ {stmt} }}
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    s = np.arange(8, dtype=np.float32) * 0.75
    w = np.linspace(1, 2, 8, dtype=np.float32)
    args = {"src": s, "wts": w, "out": np.zeros(8, np.float32), "n": 8}
    got = run_kernel(tu, "k", grid=(2,), block=(4,), args=args)["out"]
    np.testing.assert_allclose(got, np.asarray(want(s, w), np.float32), rtol=1e-6)
