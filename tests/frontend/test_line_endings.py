"""Windows (CR LF) and old Mac (CR) line ends are read as compilers read them: a backslash before
the line end continues a macro, and a kernel's lines and columns are the same as with LF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.fileio import decode_source, unix_lines
from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

KERNEL = (
    "#define PICK(v) ((v) < 0.5f ? 1.0f : \\\n"
    "                 ((v) < 2.0f ? 2.0f : 3.0f))\n"
    "#define TWICE(x) \\\n"
    "    (2.0f * (x))\n"
    "__global__ void bucket(const float* in, float* out, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = TWICE(PICK(in[i]));\n"
    "}\n"
    "int main() { float *a, *b; bucket<<<2, 64>>>(a, b, 100); return 0; }\n"
)

ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_continued_macros_with_any_line_end(tmp_path: Path, ending: str) -> None:
    path = tmp_path / "bucket.cu"
    path.write_bytes(KERNEL.replace("\n", ENDINGS[ending]).encode())
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.linspace(0.0, 3.0, 100, dtype=np.float32)
    got = run_kernel(
        tu, "bucket", grid=(2,), block=(64,), args={"in": x, "out": np.zeros_like(x), "n": 100}
    )["out"]
    want = 2.0 * np.where(x < 0.5, 1.0, np.where(x < 2.0, 2.0, 3.0)).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_diagnostic_points_at_the_same_line_and_column(tmp_path: Path, ending: str) -> None:
    bad = KERNEL.replace("out[i] = TWICE", "out[i] = missing_fn(1) + TWICE")
    path = tmp_path / "bad.cu"
    path.write_bytes(bad.replace("\n", ENDINGS[ending]).encode())
    (ds,) = parse_file(path).rejected.values()
    d = next(d for d in ds if d.code == "C2N1021")
    assert (d.loc.line, d.loc.col) == (7, 25)


def test_unix_lines_keeps_text_without_cr_and_counts_lines_alike() -> None:
    text = "a\r\nb\rc\n\r\n"
    assert unix_lines(text) == "a\nb\nc\n\n"
    assert decode_source(text.encode()) == "a\nb\nc\n\n"
    assert unix_lines("plain\n") == "plain\n"
