"""An ``inout`` image written only inside its border, by a select on the pixel's value: the
launch grid leaves the border (and the rows and columns past the last whole block) unwritten,
so those elements keep their old values -- the port copies the old values first, then writes
the interior.  Checked against the interpreter on several spellings."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.binding import binding_from_dict
from cuda2nki.fidelity.check import check

#: if / else if / else, the thread offset by one to skip the border
CHAINED = """
__global__ void k(const unsigned char* src, unsigned char* img, int h, int w) {
    int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int at = y * w + x;
    float hi = 70, lo = 10;
    unsigned char v = src[at];
    if (v >= hi) img[at] = 255;
    else if (v <= lo) img[at] = 0;
    else {
        float mid = (hi + lo) / 2;
        if (v >= mid) img[at] = 255;
        else img[at] = 0;
    }
}
"""
#: a ternary store, the index computed from the block corner
TERNARY = """
__global__ void k(const float* src, float* img, int h, int w) {
    int r0 = 1 + blockIdx.y * blockDim.y, c0 = 1 + blockIdx.x * blockDim.x;
    int r = r0 + threadIdx.y, c = c0 + threadIdx.x;
    img[r * w + c] = src[r * w + c] > 0.5f ? src[r * w + c] : 0.0f;
}
"""


@pytest.mark.parametrize(
    ("src", "dtype", "block"),
    [(CHAINED, "uint8", 16), (TERNARY, "float32", 8)],
    ids=["chained-ifs", "ternary"],
)
def test_the_unwritten_border_keeps_its_old_values(
    tmp_path: Path, src: str, dtype: str, block: int
) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    bdict = {
        "kernel": "k",
        "launch": {"grid": [f"(w - 2) / {block}", f"(h - 2) / {block}"], "block": [block, block]},
        "params": {
            "src": {"shape": ["h", "w"], "dtype": dtype, "role": "in"},
            "img": {"shape": ["h", "w"], "dtype": dtype, "role": "inout"},
            "h": 64,
            "w": 40,
        },
    }
    binding = binding_from_dict(bdict)
    res = api.port(str(cu), binding=binding, kernel="k")
    assert res.source is not None and not res.literal
    port = tmp_path / "k_port.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel="k", seeds=2, timeout=120)
    assert rep.numerics_outcome == "pass", [
        (n.get("shape"), n.get("evidence")) for n in rep.numerics if n.get("defect")
    ]
