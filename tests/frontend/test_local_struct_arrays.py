"""A local struct holding an array (``Hist h;`` with ``float bins[4];``): its members are
local variables, the array a local array; copying it or passing it on stays refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

STRUCTS = {
    "plain": ("struct Hist { int count; float bins[4]; };", "Hist", "h.bins[B]", "h.count"),
    "typedef": (
        "typedef struct { float bins[2][2]; int count; } Hist;",
        "Hist",
        "h.bins[(B) / 2][(B) % 2]",
        "h.count",
    ),
    "nested": (
        "struct Bins { float v[4]; int pad; }; struct Hist { int count; Bins b; };",
        "Hist",
        "h.b.v[B]",
        "h.count",
    ),
    "method": (
        "struct Hist { int count; float bins[4];\n"
        "  __device__ void add(int b) { bins[b] += 1.0f; count++; }\n"
        "  __device__ float share(int b) const { return bins[b] / count; } };",
        "Hist",
        "h.bins[B]",
        "h.count",
    ),
}


def _kernel(struct: str, name: str, bin_: str, count: str, method: bool) -> str:
    add = "h.add(b);" if method else f"{bin_.replace('B', 'b')} += 1.0f; {count}++;"
    read = "h.share(b)" if method else f"{bin_.replace('B', 'b')} / {count}"
    return f"""{struct}
__global__ void hist(const float* x, float* out, int n) {{
    {name} h;
    {count} = 0;
    for (int b = 0; b < 4; b++) {bin_.replace("B", "b")} = 0.0f;
    for (int i = 0; i < n; i++) {{ int b = (int)x[threadIdx.x * n + i] & 3; {add} }}
    for (int b = 0; b < 4; b++) out[threadIdx.x * 4 + b] = {read};
}}
"""


@pytest.mark.parametrize("spelling", sorted(STRUCTS))
def test_local_struct_with_an_array_member(tmp_path: Path, spelling: str) -> None:
    struct, name, bin_, count = STRUCTS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(_kernel(struct, name, bin_, count, spelling == "method"))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.array([0, 1, 2, 3, 3, 3, 1, 1, 1, 1, 1, 2], np.float32)
    got = run_kernel(
        tu, "hist", grid=(1,), block=(2,), args={"x": x, "out": np.zeros(8, np.float32), "n": 6}
    )["out"].reshape(2, 4)
    want = np.stack([np.bincount(r.astype(int) & 3, minlength=4) / 6 for r in x.reshape(2, 6)])
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "use,line",
    [
        ("Hist g = h; out[0] = g.count;", 5),
        ("out[0] = total(h);", 5),
        ("Hist g; g = h; out[0] = g.count;", 5),
    ],
)
def test_copies_stay_refused(tmp_path: Path, use: str, line: int) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""struct Hist {{ int count; float bins[4]; }};
__device__ float total(Hist h) {{ return h.count; }}
__global__ void k(float* out) {{
    Hist h; h.count = 1;
    {use}
}}
"""
    )
    tu = parse_file(path)
    ds = tu.rejected["k"]
    assert ds[0].code == "C2N1025" and "array member" in ds[0].message
