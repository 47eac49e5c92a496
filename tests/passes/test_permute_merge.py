"""Permutations whose moved axes carry a contiguous neighbour transpose over merged axes:
``NCHW -> NHWC`` is the transpose of ``[C, H * W]`` per ``n`` (one DMA of ``H * W`` elements per
channel row, the stores one position's channels per partition row), not one ``C x W`` transpose
per ``(n, h)``.  The ports stay exact against the SIMT interpreter for both targets."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Load, Rows, Store
from cuda2nki.rewrite import nodes
from tests.port.acceptance import port_variant, tensor_param

#: (name, source, launch, src shape, dst shape, sizes, merged): permutations, spelled variously
VARIANTS = [
    (
        "nchw_nhwc_3d_grid",  # the corpus form with other names and block shape
        "__global__ void k(const float* x, float* y, int B, int Ch, int R, int S) {\n"
        "    int s = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "    int b = blockIdx.z / Ch, ch = blockIdx.z % Ch;\n"
        "    if (s < S && r < R)\n"
        "        y[((b * R + r) * S + s) * Ch + ch] = x[((b * Ch + ch) * R + r) * S + s];\n"
        "}\n",
        {"grid": ["ceil_div(S, 16)", "ceil_div(R, 4)", "B * Ch"], "block": [16, 4]},
        ["B", "Ch", "R", "S"],
        ["B", "R", "S", "Ch"],
        [{"B": 2, "Ch": 20, "R": 7, "S": 30}, {"B": 1, "Ch": 130, "R": 3, "S": 50}],
        True,
    ),
    (
        "nchw_nhwc_flat_index",  # one flat thread index taken apart by / and %
        "__global__ void k(const float* in, float* out, int N, int C, int H, int W) {\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (t >= N * C * H * W) return;\n"
        "    int w = t % W, h = (t / W) % H, c = (t / (W * H)) % C, n = t / (W * H * C);\n"
        "    out[((n * H + h) * W + w) * C + c] = in[t];\n"
        "}\n",
        {"grid": ["ceil_div(N * C * H * W, 256)"], "block": [256]},
        ["N", "C", "H", "W"],
        ["N", "H", "W", "C"],
        [{"N": 2, "C": 5, "H": 9, "W": 11}, {"N": 1, "C": 200, "H": 5, "W": 3}],
        True,
    ),
    (
        "rotate_axes_3d",  # [A, B, K] -> [B, K, A]: B and K move together past A
        "__global__ void k(const float* p, float* q, int A, int B, int K) {\n"
        "    int kk = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int bb = blockIdx.y;\n"
        "    int aa = blockIdx.z;\n"
        "    if (kk < K) q[(bb * K + kk) * A + aa] = p[(aa * B + bb) * K + kk];\n"
        "}\n",
        {"grid": ["ceil_div(K, 32)", "B", "A"], "block": [32]},
        ["A", "B", "K"],
        ["B", "K", "A"],
        [{"A": 40, "B": 6, "K": 25}, {"A": 129, "B": 2, "K": 70}],
        True,
    ),
    (
        "batched_transpose",  # [Z, M, N] -> [Z, N, M]: no neighbour moves with the columns
        "__global__ void k(const float* a, float* t, int Z, int M, int N) {\n"
        "    int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int i = blockIdx.y;\n"
        "    int z = blockIdx.z;\n"
        "    if (j < N) t[(z * N + j) * M + i] = a[(z * M + i) * N + j];\n"
        "}\n",
        {"grid": ["ceil_div(N, 32)", "M", "Z"], "block": [32]},
        ["Z", "M", "N"],
        ["Z", "N", "M"],
        [{"Z": 3, "M": 40, "N": 50}, {"Z": 1, "M": 130, "N": 7}],
        False,
    ),
]


def _binding(launch, src_shape, dst_shape, sizes, src_src) -> dict:
    first, second = _tensor_names(src_src)
    return {
        "launch": launch,
        "params": {
            first: tensor_param(src_shape, "in"),
            second: tensor_param(dst_shape, "out"),
            **sizes[0],
        },
        "check": {"shapes": sizes[1:]},
    }


def _tensor_names(src: str) -> tuple[str, str]:
    """The kernel's two pointer parameters, in order."""
    head = src.split("(", 1)[1].split(")", 1)[0]
    ptrs = [p.split("*")[1].strip() for p in head.split(",") if "*" in p]
    return ptrs[0], ptrs[1]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "launch", "ss", "ds", "sizes", "merged"),
    VARIANTS,
    ids=[v[0] for v in VARIANTS],
)
def test_permutation_transposes_merged_axes(
    vid, src, launch, ss, ds, sizes, merged, target, tmp_path
) -> None:
    b = _binding(launch, ss, ds, sizes, src)
    res, run, points = port_variant(f"transpose/{vid}", src, b, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
    assert "transpose" in res.source
    dmas = [s for s in nodes(res.ir_tiles.body) if isinstance(s, Load | Store)]
    flat = [s for s in dmas if isinstance((s.src if isinstance(s, Load) else s.dst).dims[0], Rows)]
    # merged: every load of the source and store of the target runs over the flat elements
    assert bool(flat) is merged and (not merged or len(flat) == len(dmas)), [str(s) for s in dmas]
