"""Column sums of a matrix with fewer rows than partitions fold column blocks onto the idle
partitions: ``128 // R`` blocks stacked, one tensor-engine matmul against a block indicator
sums them all, and the sums leave as rows of consecutive outputs.  Each spelling is checked
against the SIMT interpreter at its binding's points (few rows, more than 128 rows, ragged
column counts) in both APIs."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Const, Loop, Matmul
from tests.port.acceptance import port_variant

_BIND = {
    "params": {
        "X": {"shape": ["R", "C"], "dtype": "float32", "role": "in"},
        "Y": {"shape": ["C"], "dtype": "float32", "role": "out"},
        "R": 40,
        "C": 300,
    },
    "check": {"shapes": [{"R": 7, "C": 1000}, {"R": 130, "C": 33}, {"R": 64, "C": 129}]},
}

# thread per column; the row loop's spelling, the guard and the block size vary
CASES = {
    "for_rows": """
__global__ void k(const float* X, float* Y, int R, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        float s = 0.0f;
        for (int r = 0; r < R; ++r) s += X[r * C + c];
        Y[c] = s;
    }
}
""",
    "grid_stride_while": """
__global__ void k(const float* X, float* Y, int R, int C) {
    for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < C; col += blockDim.x * gridDim.x) {
        float acc = 0.0f;
        int row = 0;
        while (row < R) { acc += X[col + row * C]; row++; }
        Y[col] = acc;
    }
}
""",
    "early_return_scaled": """
__global__ void k(const float* X, float* Y, int R, int C) {
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j >= C) return;
    float t = 0.0f;
    for (int i = 0; i < R; i += 1) t += 2.0f * X[i * C + j] - 1.0f;
    Y[j] = t * 0.25f;
}
""",
}

_LAUNCH = {
    "for_rows": {"grid": ["ceil_div(C, 128)"], "block": [128]},
    "grid_stride_while": {"grid": [3], "block": [32]},
    "early_return_scaled": {"grid": ["ceil_div(C, 256)"], "block": [256]},
}


def _stationary_columns(res) -> list:
    """The column counts of the stationary operands of the port's matmuls, outside the
    row-tile loops (the first row tile's)."""
    out = []

    def walk(stmts, inside: bool) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                walk(s.body, inside or s.var.startswith("t"))
            elif isinstance(s, Matmul) and not inside:
                out.append(s.stationary.dims[1].size)

    walk(res.ir_tiles.body, False)
    return out


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_short_column_sums_fold_blocks_onto_the_partitions(name, target, tmp_path) -> None:
    bind = {**_BIND, "launch": _LAUNCH[name]}
    res, run, points = port_variant(f"fold/{name}", CASES[name], bind, target, tmp_path, 1e-4)
    assert len(points) >= 4 and not run.mismatches, run.mismatches
    # one matmul for every stacked block: its stationary operand has a column per block
    assert [c for c in _stationary_columns(res) if c != Const(1)], _stationary_columns(res)


def test_an_epilogue_reading_a_column_vector_folds_too(tmp_path) -> None:
    """``Y[c] = sum_r (X[r, c] - mu[c])^2 / R + b[c]``: the per-column values are stacked with
    the blocks (in the body) and laid out like the sums (after them)."""
    src = """
__global__ void k(const float* X, const float* mu, const float* b, float* Y, int R, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        float q = 0.0f;
        for (int r = 0; r < R; r++) { float d = X[r * C + c] - mu[c]; q += d * d; }
        Y[c] = q / R + b[c];
    }
}
"""
    params = {
        **_BIND["params"],
        "mu": {"shape": ["C"], "dtype": "float32", "role": "in"},
        "b": {"shape": ["C"], "dtype": "float32", "role": "in"},
    }
    bind = {**_BIND, "params": params, "launch": {"grid": ["ceil_div(C, 64)"], "block": [64]}}
    for target in ("nki", "legacy"):
        res, run, _ = port_variant("fold/centred", src, bind, target, tmp_path, 1e-4)
        assert not run.mismatches, (target, run.mismatches)
        assert [c for c in _stationary_columns(res) if c != Const(1)], target


#: column sums over merged rows: the row count is a product of size parameters (``B * T`` rows
#: of a ``[B, T, C]`` tensor, or of a matrix bound ``[M * K, C]``), each spelled differently
MERGED = {
    "column_pointer": (
        """
__global__ void k(float* g, const float* d, int B, int T, int C) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= C) return;
    const float* col = d + o;
    float s = 0.0f;
    for (int r = 0; r < B * T; r++) s += col[r * C];
    g[o] += s;
}
""",
        {"d": ["B", "T", "C"], "g": ["C"]},
        {"g": "inout"},
        [{"B": 2, "T": 24, "C": 258}, {"B": 3, "T": 5, "C": 129}, {"B": 5, "T": 40, "C": 70}],
    ),
    "three_dims_while": (
        """
__global__ void k(const float* x, float* y, int N, int H, int W, int C) {
    for (int c = threadIdx.x + blockIdx.x * blockDim.x; c < C; c += gridDim.x * blockDim.x) {
        float acc = 0.0f;
        int p = 0;
        while (p < N * H * W) { acc += 0.5f * x[c + p * C]; p += 1; }
        y[c] = acc;
    }
}
""",
        {"x": ["N", "H", "W", "C"], "y": ["C"]},
        {},
        [{"N": 2, "H": 3, "W": 5, "C": 300}, {"N": 1, "H": 7, "W": 20, "C": 33}],
    ),
    "flat_matrix_rows": (
        """
__global__ void k(const float* m, float* out, int M, int K, int C) {
    int j = blockDim.x * blockIdx.x + threadIdx.x;
    if (j < C) {
        float t = 0.0f;
        for (int i = 0; i < M * K; ++i) t += m[i * C + j] * m[i * C + j];
        out[j] = t;
    }
}
""",
        {"m": ["M * K", "C"], "out": ["C"]},
        {},
        [{"M": 4, "K": 6, "C": 1000}, {"M": 13, "K": 11, "C": 65}],
    ),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(MERGED))
def test_sums_over_merged_rows_fold_too(name, target, tmp_path) -> None:
    src, shapes, roles, points = MERGED[name]
    sizes = {s: v for s, v in points[0].items()}
    params = {
        t: {
            "shape": shp,
            "dtype": "float32",
            "role": roles.get(t, "out" if len(shp) == 1 else "in"),
        }
        for t, shp in shapes.items()
    }
    bind = {
        "launch": {"grid": ["ceil_div(C, 64)"], "block": [64]},
        "params": {**params, **sizes},
        "check": {"shapes": points[1:]},
    }
    res, run, got = port_variant(f"fold/{name}", src, bind, target, tmp_path, 1e-4)
    assert len(got) >= 2 and not run.mismatches, run.mismatches
    assert [c for c in _stationary_columns(res) if c != Const(1)], _stationary_columns(res)
