"""A launch whose block is written in a kernel parameter (``<<<rows, dim3(K, 1024 / K)>>>(...,
K)``): the parameter takes the host's value, else one that makes a valid block, the block is
evaluated there and the parameter is tied to that value (check keeps it while it varies the
other sizes), with a note; a run-time grid then covers the kernel's guards."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

ROWS = """
__global__ void bias_rows(const float* x, const float* bias, float* y, int rows, int width) {
    int r = blockIdx.x;
    int c = threadIdx.x;
    if (r >= rows) return;
    y[r * width + c] = x[r * width + c] + bias[c];
}
"""

TILE = """
__global__ void tile_sum(const float* a, float* out, int count, int w) {
    int c = threadIdx.x;
    float s = 0.0f;
    for (int i = threadIdx.y; i < count; i += blockDim.y) s += a[i * w + c];
    atomicAdd(&out[c], s);
}
"""

#: spelling -> (source, kernel, block, tied parameter and value)
CASES = {
    "member-width-unknown": (
        ROWS
        + """
struct Net { int width; int rows; float *x, *b, *y;
    void step() { bias_rows<<<rows, width>>>(x, b, y, rows, width); } };
""",
        "bias_rows",
        [32],
        ("width", 32),
    ),
    "host-constant-width": (
        ROWS
        + """
int main() {
    const int rows = 500, width = 96;
    float *x, *b, *y;
    bias_rows<<<rows, width>>>(x, b, y, rows, width);
    return 0;
}
""",
        "bias_rows",
        [96],
        ("width", 96),
    ),
    "two-dim-block-from-one-parameter": (
        TILE
        + """
void launch(const float* a, float* out, int count, int cols) {
    tile_sum<<<1, dim3(cols, (int)(1024 / cols), 1)>>>(a, out, count, cols);
}
""",
        "tile_sum",
        [32, 32, 1],
        ("w", 32),
    ),
    "run-time-grid-and-block": (
        ROWS
        + """
class Layer {
  public:
    int n_rows, n_cols; float *in, *bb, *out;
    int blocks;
    void forward() { bias_rows<<<blocks, n_cols>>>(in, bb, out, n_rows, n_cols); }
};
""",
        "bias_rows",
        [32],
        ("width", 32),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_block_parameter_is_tied_to_the_block_it_gives(case: str) -> None:
    src, kernel, block, (name, value) = CASES[case]
    tu = parse_source(src, "k.cu")
    got, diags = infer_binding(tu, kernel)
    assert "launch" in got, [d.message for d in diags if d.severity.name != "NOTE"]
    assert got["launch"]["block"] == block
    assert got["params"][name] == {"tie": str(value)}
    assert any("tied so that check keeps it" in d.message for d in diags)


def test_port_and_check_agree_at_the_tied_value(tmp_path) -> None:
    from cuda2nki import api

    src, kernel, _, _ = CASES["two-dim-block-from-one-parameter"]
    cu = tmp_path / "tiles.cu"
    cu.write_text(src)
    res = api.port(cu, kernel=kernel)
    assert res.source is not None, [d.message for d in res.diagnostics]
    assert "block (32, 32, 1)" in res.source  # the host's block at the tied value
    port = tmp_path / "tiles_port.py"
    port.write_text(res.source)
    report = api.check(cu, port, kernel=kernel, seeds=2)
    assert report.numerics_outcome == "pass", [d.message for d in report.findings]
