"""A kernel file included through a chain of source files (a unity build) sees the outermost
file's definitions; an array of structs in ``__constant__`` memory is read member by member."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

KERNEL = """
__global__ void scale_rows(const fp* in, fp* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = FACTOR * in[i];
}
"""

# how the outermost file spells the kernel file's missing names
SPELLINGS = {
    "define": "#define fp float\n#define FACTOR 2\n",
    "typedef": "typedef float fp;\nconst int FACTOR = 2;\n",
    "using": "using fp = float;\n#define FACTOR (1 + 1)\n",
}


def _chain(tmp_path: Path, head: str, depth: int, latin1: bool = False) -> Path:
    """main.cu -> work_1.cu -> ... -> kernel.cu, ``depth`` files between main and kernel."""
    (tmp_path / "kernel.cu").write_text(KERNEL)
    inner = "kernel.cu"
    for level in range(depth, 0, -1):
        name = f"work_{level}.cu"
        (tmp_path / name).write_text(f'#include "{inner}"\nvoid work_{level}() {{}}\n')
        inner = name
    main = (
        "// r\xe9sum\xe9 of the model\n"
        f'#include <stdio.h>\n{head}#include "{inner}"\n'
        "int main() { fp* a; fp* b; scale_rows<<<4, 64>>>(a, b, 200); return 0; }\n"
    )
    (tmp_path / "main.cu").write_bytes(main.encode("latin-1" if latin1 else "utf-8"))
    return tmp_path / "kernel.cu"


def _check(path: Path) -> None:
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.linspace(-3, 3, 200, dtype=np.float32)
    got = run_kernel(
        tu,
        "scale_rows",
        grid=(4,),
        block=(64,),
        args={"in": x, "out": np.zeros(200, np.float32), "n": 200},
    )["out"]
    np.testing.assert_array_equal(got, 2 * x)


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_kernel_file_through_a_chain_of_includes(tmp_path: Path, spelling: str, depth: int) -> None:
    _check(_chain(tmp_path, SPELLINGS[spelling], depth))


def test_an_includer_with_a_latin1_comment(tmp_path: Path) -> None:
    _check(_chain(tmp_path, SPELLINGS["define"], 2, latin1=True))


def test_a_chain_nobody_completes_keeps_its_diagnostic(tmp_path: Path) -> None:
    path = _chain(tmp_path, "", 2)
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1022" and "'fp'" in ds[0].message


CONSTANT_ARRAY = """
typedef struct params {{
    int offset;
    float scale;
    short tag;
}} params;
__constant__ params {table}[{n}] = {{{init}}};
__global__ void gather_scaled(float* out, const float* in, int n) {{
    int b = blockIdx.x, t = threadIdx.x;
    if (t < n) out[b * n + t] = {table}[b].scale * in[{table}[b].offset + t] + {table}[b].tag;
}}
"""


@pytest.mark.parametrize("table,blocks", [("d_unique", 3), ("cParams", 5)])
def test_constant_array_of_structs(tmp_path: Path, table: str, blocks: int) -> None:
    rows = [(2 * b, 0.5 * (b + 1), b - 1) for b in range(blocks)]
    init = ", ".join(f"{{{o}, {s}f, {t}}}" for o, s, t in rows)
    path = tmp_path / "k.cu"
    path.write_text(CONSTANT_ARRAY.format(table=table, n=blocks, init=init))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (g,) = tu.globals
    assert g.name == table and g.space == "constant"
    assert g.ty.dims == (blocks,) and g.ty.elem.width == 12  # int, float, short: C layout
    n = 8
    x = np.arange(2 * blocks + n, dtype=np.float32)
    got = run_kernel(
        tu,
        "gather_scaled",
        grid=(blocks,),
        block=(32,),
        args={"out": np.zeros(blocks * n, np.float32), "in": x, "n": n},
    )["out"].reshape(blocks, n)
    want = np.array([[s * x[o + t] + tg for t in range(n)] for o, s, tg in rows], np.float32)
    np.testing.assert_array_equal(got, want)
