"""A read guarded by a select (``i < n ? x[i] : 0``) may address past the tensor where the select
picks the other branch; the port loads only the elements inside the tensor.  These block trees
do not fold into one reduction (a block size that is not a power of two, a tree stopped early
with only some of its partial sums used), so their partial sums read the input at strided
offsets, some past its end on the last block.  (The legacy API's masked loads never read past
the end; the current API's DMAs would.)"""

from __future__ import annotations

import pytest

from tests.port.acceptance import port_variant


def _tree(block: int, start: int, stop: int, tail: str) -> str:
    return f"""
__global__ void k(const float* x, float* y, int n) {{
    __shared__ float s[{block}];
    int t = threadIdx.x, i = blockIdx.x * {block} + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int o = {start}; o > {stop}; o >>= 1) {{
        if (t < o) s[t] += s[t + o];
        __syncthreads();
    }}
    if (t == 0) y[blockIdx.x] = {tail};
}}
"""


def _bind(block: int) -> dict:
    return {
        "launch": {"grid": [f"ceil_div(n, {block})"], "block": [block]},
        "params": {
            "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
            "y": {"shape": [f"ceil_div(n, {block})"], "dtype": "float32", "role": "out"},
            "n": 1000,
        },
        "check": {"shapes": [{"n": 200}, {"n": 33}]},
    }


CASES = [
    ("block_of_96", 96, _tree(96, 48, 0, "s[0]")),
    ("stopped_early", 64, _tree(64, 32, 1, "s[0]")),
    ("stopped_at_four", 32, _tree(32, 16, 2, "s[0] + s[2]")),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "block", "src"), CASES, ids=[c[0] for c in CASES])
def test_guarded_strided_reads_stay_inside_the_tensor(name, block, src, target, tmp_path) -> None:
    _, run, points = port_variant(f"tree/{name}", src, _bind(block), target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches


def _clamped(reads: str) -> str:
    return f"""
__global__ void k(const float* in, float* out, int H, int W) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {{
            {reads}
        }}
    out[y * W + x] = s / 9.0f;
}}
"""


_CLAMP_BIND = {
    "launch": {"grid": ["ceil_div(W, 16)", "ceil_div(H, 16)"], "block": [16, 16]},
    "params": {
        "in": {"shape": ["H", "W"], "dtype": "float32", "role": "in"},
        "out": {"shape": ["H", "W"], "dtype": "float32", "role": "out"},
        "H": 70,
        "W": 150,
    },
    "check": {"shapes": [{"H": 130, "W": 33}, {"H": 1, "W": 20}]},
}

# a clamped window: its edge cases are selects whose branches read one fixed row or column
# (``in[0, x + dx]``, ``in[y + dy, W - 1]``), each addressing past the tensor where its select
# picks another branch.  (The clamp spelled with ternaries is not lifted: its offset is not
# split along the shape, and it is ported literally -- still right.)
CLAMPED = [
    (
        "min_max",
        "int yy = min(max(y + dy, 0), H - 1), xx = min(max(x + dx, 0), W - 1);"
        " s += in[yy * W + xx];",
    ),
    (
        "ternaries",
        "int yy = y + dy < 0 ? 0 : (y + dy >= H ? H - 1 : y + dy);"
        " int xx = x + dx < 0 ? 0 : (x + dx > W - 1 ? W - 1 : x + dx);"
        " s += in[yy * W + xx] * (dx == 0 ? 2.0f : 1.0f);",
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "reads"), CLAMPED, ids=[c[0] for c in CLAMPED])
def test_a_clamped_window_reads_inside_the_tensor(name, reads, target, tmp_path) -> None:
    literal_ok = name == "ternaries"
    _, run, points = port_variant(
        f"clamp/{name}", _clamped(reads), _CLAMP_BIND, target, tmp_path, 1e-5, 3, literal_ok
    )
    assert len(points) >= 3 and not run.mismatches, run.mismatches


def test_an_unshifted_read_under_a_mask_is_loaded_once(tmp_path) -> None:
    """A causal softmax reads ``att[b, r, c]`` at the tile's own place under its mask three times
    (max, sum, output): one plain load serves all three, no clipped reloads (C2N5006)."""
    from pathlib import Path

    from cuda2nki import api

    cu = Path(__file__).resolve().parents[2] / "corpus" / "norm" / "causal_softmax_warp.cu"
    port = tmp_path / "port.py"
    port.write_text(api.port(cu).source)
    assert port.read_text().count("src=att[") == 1
    report = api.check(cu, port, binding=cu.with_suffix(".toml"), seeds=1)
    assert report.verdict == "pass", [d.message for d in report.findings]
