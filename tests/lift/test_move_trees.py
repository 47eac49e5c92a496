"""Compare-and-move trees over shared memory (arg-max / arg-min of a block): the value at
element 0 is the block's extremum and the companion that moved with it is the winner's,
with the tree's own tie rule (a strict comparison keeps the lower half, a non-strict one takes
the upper half at every step), in several spellings; a data-guarded shared write outside such a
tree is still refused."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict, generate_inputs
from cuda2nki.frontend import parse_source
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.lift import lift_kernel

#: separate value and position arrays; the halving loop written with a shift
SEPARATE = """
__global__ void k(const float* x, float* top, int* top_at, int n) {
    __shared__ float v[BS];
    __shared__ int at[BS];
    int t = threadIdx.x;
    int g = blockIdx.x * BS + t;
    v[t] = g < n ? x[g] : FILL;
    at[t] = g < n ? g : -1;
    __syncthreads();
    for (int s = BS / 2; s > 0; s >>= 1) {
        if (t < s && v[t + s] CMP v[t]) {
            v[t] = v[t + s];
            at[t] = at[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        top[blockIdx.x] = v[0];
        top_at[blockIdx.x] = at[0];
    }
}"""

#: one float buffer, positions in its second half read through an int pointer; the comparison
#: written the other way round, the guard nested, the stride halved by division
POOLED = """
__global__ void k(const float* x, float* top, int* top_at, int n) {
    __shared__ float pool[2 * BS];
    int* pos = (int*)&pool[BS];
    unsigned int lane = threadIdx.x;
    unsigned int g = blockIdx.x * blockDim.x + lane;
    pool[lane] = g < n ? x[g] : FILL;
    pos[lane] = g < n ? (int)g : -1;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half >= 1; half /= 2) {
        if (lane < half) {
            if (pool[lane] RCMP pool[lane + half]) {
                pool[lane] = pool[lane + half];
                pos[lane] = pos[lane + half];
            }
        }
        __syncthreads();
    }
    if (lane == 0) { top_at[blockIdx.x] = pos[0]; top[blockIdx.x] = pool[0]; }
}"""

_RCMP = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


def _binding(bs: int, n: int):
    return binding_from_dict(
        {
            "kernel": "k",
            "launch": {"grid": [f"ceil_div(n, {bs})"], "block": [bs]},
            "params": {
                "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "top": {"shape": [f"ceil_div(n, {bs})"], "dtype": "float32", "role": "out"},
                "top_at": {"shape": [f"ceil_div(n, {bs})"], "dtype": "int32", "role": "out"},
                "n": n,
            },
        },
        path="<tree>",
    )


def _source(template: str, bs: int, cmp: str) -> str:
    fill = "-INFINITY" if cmp.startswith(">") else "INFINITY"
    return (
        template.replace("BS", str(bs))
        .replace("RCMP", _RCMP[cmp])
        .replace("CMP", cmp)
        .replace("FILL", fill)
    )


def _tree(x: np.ndarray, bs: int, cmp: str) -> tuple[np.ndarray, np.ndarray]:
    """The CUDA tree step by step, block by block (the reference)."""
    fill = -np.inf if cmp.startswith(">") else np.inf
    nb = -(-x.size // bs)
    v = np.full(nb * bs, fill, np.float32)
    v[: x.size] = x
    at = np.full(nb * bs, -1, np.int64)
    at[: x.size] = np.arange(x.size)
    v, at = v.reshape(nb, bs), at.reshape(nb, bs)
    win = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}[cmp]
    s = bs // 2
    while s > 0:
        moved = win(v[:, s : 2 * s], v[:, :s])
        v[:, :s] = np.where(moved, v[:, s : 2 * s], v[:, :s])
        at[:, :s] = np.where(moved, at[:, s : 2 * s], at[:, :s])
        s //= 2
    return v[:, 0], at[:, 0]


def _run(src: str, bs: int, n: int, x: np.ndarray):
    b = _binding(bs, n)
    res = lift_kernel(parse_source(src, "tree.cu"), "k", b)
    assert res.claimed, [d.message for d in res.diagnostics]
    resolved = b.resolve(b.test_points()[0])
    inputs = generate_inputs(resolved, seed=3)
    inputs["x"] = x.astype(np.float32)
    got = evaluate(res.kernel_ir, inputs, dict(resolved.scalars))
    return np.asarray(got["top"]), np.asarray(got["top_at"])


def _inputs(n: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(11)
    if kind == "ties":  # few distinct values: every block has many equal extrema
        return np.floor(rng.uniform(0, 4, n)).astype(np.float32)
    if kind == "flat":
        return np.full(n, 0.5, np.float32)
    return rng.standard_normal(n).astype(np.float32)


@pytest.mark.parametrize("template", [SEPARATE, POOLED], ids=["separate", "pooled"])
@pytest.mark.parametrize("cmp", [">", ">=", "<", "<="])
@pytest.mark.parametrize("bs", [32, 128, 256])
@pytest.mark.parametrize("kind", ["ties", "flat", "normal"])
def test_the_tree_keeps_its_winner(template: str, cmp: str, bs: int, kind: str) -> None:
    n = 3 * bs - 5
    x = _inputs(n, kind)
    top, top_at = _run(_source(template, bs, cmp), bs, n, x)
    want, want_at = _tree(x, bs, cmp)
    np.testing.assert_array_equal(top.astype(np.float32), want)
    np.testing.assert_array_equal(top_at.astype(np.int64), want_at)


def test_the_tie_winner_is_the_least_bit_reversed_index() -> None:
    # equal maxima at positions 3 and 5 of one block of 8: the tree keeps 5 (101 -> 101 is
    # less than 011 -> 110 reversed), not the first position
    x = np.zeros(8, np.float32)
    x[[3, 5]] = 2.0
    _, top_at = _run(_source(SEPARATE, 8, ">"), 8, 8, x)
    assert int(top_at[0]) == 5
    _, top_at = _run(_source(SEPARATE, 8, ">="), 8, 8, x)
    assert int(top_at[0]) == 3


NOT_A_TREE = """
__global__ void k(const float* x, float* top, int* top_at, int n) {
    __shared__ float v[64];
    int t = threadIdx.x;
    v[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (v[t] > 0.5f) v[t] = v[(t + 1) % 64];
    __syncthreads();
    if (t == 0) { top[blockIdx.x] = v[0]; top_at[blockIdx.x] = 0; }
}"""


def test_a_data_guarded_write_outside_a_tree_is_refused() -> None:
    b = _binding(64, 128)
    res = lift_kernel(parse_source(NOT_A_TREE, "tree.cu"), "k", b)
    assert not res.claimed
    assert "C2N2018" in [d.code for d in res.diagnostics]


#: the index breaks ties (the least index among equal values wins), read into locals first
LEX = """
__global__ void k(const float* x, float* top, int* top_at, int n) {
    __shared__ float v[BS];
    __shared__ int at[BS];
    int t = threadIdx.x;
    int g = blockIdx.x * BS + t;
    v[t] = g < n ? x[g] : FILL;
    at[t] = g < n ? g : n;
    __syncthreads();
    for (int s = BS / 2; s > 0; s >>= 1) {
        if (t < s) {
            float o = v[t + s];
            int oi = at[t + s];
            if (o CMP v[t] || (o == v[t] && oi < at[t])) {
                v[t] = o;
                at[t] = oi;
            }
        }
        __syncthreads();
    }
    if (t == 0) {
        top[blockIdx.x] = v[0];
        top_at[blockIdx.x] = at[0];
    }
}"""


@pytest.mark.parametrize("cmp", [">", "<"])
@pytest.mark.parametrize("bs", [64, 128])
@pytest.mark.parametrize("kind", ["ties", "flat", "normal"])
def test_an_index_tie_rule_picks_the_least_index(cmp: str, bs: int, kind: str) -> None:
    n = 3 * bs - 5
    x = _inputs(n, kind)
    top, top_at = _run(_source(LEX, bs, cmp), bs, n, x)
    fill = -np.inf if cmp == ">" else np.inf
    nb = -(-n // bs)
    pad = np.full(nb * bs, fill, np.float32)
    pad[:n] = x
    rows = pad.reshape(nb, bs)
    best = rows.max(axis=1) if cmp == ">" else rows.min(axis=1)
    np.testing.assert_array_equal(top.astype(np.float32), best)
    want_at = [b * bs + int(np.flatnonzero(rows[b] == best[b])[0]) for b in range(nb)]
    np.testing.assert_array_equal(top_at.astype(np.int64), want_at)


#: a float companion (the other input at the maximum's position) moves with the value
COMPANION = """
__global__ void k(const float* x, const float* y, float* top, float* top_y, int n) {
    __shared__ float v[BS];
    __shared__ float w[BS];
    int t = threadIdx.x;
    int g = blockIdx.x * BS + t;
    v[t] = g < n ? x[g] : -INFINITY;
    w[t] = g < n ? y[g] : 0.0f;
    __syncthreads();
    for (int s = BS / 2; s > 0; s >>= 1) {
        if (t < s && v[t] < v[t + s]) {
            w[t] = w[t + s];
            v[t] = v[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        top_y[blockIdx.x] = w[0];
        top[blockIdx.x] = v[0];
    }
}"""


def test_a_float_companion_moves_with_the_value() -> None:
    bs, n = 64, 250
    b = binding_from_dict(
        {
            "kernel": "k",
            "launch": {"grid": [f"ceil_div(n, {bs})"], "block": [bs]},
            "params": {
                "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "y": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "top": {"shape": [f"ceil_div(n, {bs})"], "dtype": "float32", "role": "out"},
                "top_y": {"shape": [f"ceil_div(n, {bs})"], "dtype": "float32", "role": "out"},
                "n": n,
            },
        },
        path="<tree>",
    )
    res = lift_kernel(parse_source(COMPANION.replace("BS", str(bs)), "tree.cu"), "k", b)
    assert res.claimed, [d.message for d in res.diagnostics]
    resolved = b.resolve(b.test_points()[0])
    inputs = generate_inputs(resolved, seed=3)
    x = _inputs(n, "ties")
    inputs["x"] = x
    got = evaluate(res.kernel_ir, inputs, dict(resolved.scalars))
    _, want_at = _tree(x, bs, ">")
    np.testing.assert_array_equal(np.asarray(got["top_y"]), inputs["y"][want_at])


def test_an_index_tie_rule_in_a_pooled_buffer() -> None:
    src = (
        _source(LEX, 64, ">")
        .replace("__shared__ int at[64];", "int* at = (int*)&v[64];")
        .replace("__shared__ float v[64];", "__shared__ float v[128];")
    )
    x = _inputs(250, "ties")
    _, top_at = _run(src, 64, 250, x)
    rows = np.full(256, -np.inf, np.float32)
    rows[:250] = x
    rows = rows.reshape(4, 64)
    want = [b * 64 + int(np.argmax(rows[b])) for b in range(4)]
    np.testing.assert_array_equal(top_at.astype(np.int64), want)


#: the same compare-and-move over a warp with shuffles (no shared memory)
SHUFFLED = """
__global__ void k(const float* x, float* top, int* top_at, int n) {
    int t = threadIdx.x;
    int g = blockIdx.x * 32 + t;
    float v = g < n ? x[g] : -INFINITY;
    int i = g < n ? g : -1;
    for (int off = 16; off > 0; off >>= 1) {
        float ov = __shfl_down_sync(0xffffffff, v, off);
        int oi = __shfl_down_sync(0xffffffff, i, off);
        if (ov > v) { v = ov; i = oi; }
    }
    if (t == 0) { top[blockIdx.x] = v; top_at[blockIdx.x] = i; }
}"""


@pytest.mark.parametrize(
    ("kind", "cmp"), [("__shfl_down_sync", ">"), ("__shfl_xor_sync", ">=")], ids=["down", "xor"]
)
def test_a_warp_shuffle_compare_and_move_keeps_its_winner(kind: str, cmp: str) -> None:
    # a lane's value shuffled again holds lanes of lanes: every one of them is re-based on the
    # lane it is read from (a maximum at lane 31 once came out at lane 28)
    src = SHUFFLED.replace("__shfl_down_sync", kind).replace("ov > v", f"ov {cmp} v")
    for lanes in ([31, 15, 3, 0], [29, 30, 14, 7]):
        x = np.linspace(-1.0, 0.0, 4 * 32, dtype=np.float32)
        for b, lane in enumerate(lanes):
            x[32 * b + lane] = 2.0
        _, top_at = _run(src, 32, 4 * 32, x)
        np.testing.assert_array_equal(
            top_at.astype(np.int64), [32 * b + p for b, p in enumerate(lanes)]
        )
    x = _inputs(32 * 24, "ties")
    _, top_at = _run(src, 32, 32 * 24, x)
    np.testing.assert_array_equal(top_at.astype(np.int64), _tree(x, 32, cmp)[1])


def _ladder(x: np.ndarray, kind: str, cmp: str, offs: list[int]) -> np.ndarray:
    """The shuffle ladder step by step: the index every lane of every warp holds."""
    win = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}[cmp]
    v = x.reshape(-1, 32).copy()
    i = np.arange(x.size).reshape(-1, 32)
    lanes = np.arange(32)
    for off in offs:
        other = lanes ^ off if kind == "xor" else np.where(lanes + off < 32, lanes + off, lanes)
        take = win(v[:, other], v)
        v, i = np.where(take, v[:, other], v), np.where(take, i[:, other], i)
    return i


@pytest.mark.parametrize(
    ("kind", "cmp", "order"),
    [("down", ">=", "up"), ("xor", "<", "up"), ("xor", "<=", "down"), ("down", ">", "down")],
)
def test_a_shuffle_ladder_is_one_fold_with_its_tie_rule(kind: str, cmp: str, order: str) -> None:
    # every lane stores what it holds (a xor ladder leaves the whole warp's winner in every
    # lane, each with its own tie rule); lane 0 only for a down ladder
    src = SHUFFLED.replace("__shfl_down_sync", f"__shfl_{kind}_sync").replace(
        "ov > v", f"ov {cmp} v"
    )
    if cmp.startswith("<"):
        src = src.replace("-INFINITY", "INFINITY")
    offs = [16, 8, 4, 2, 1] if order == "down" else [1, 2, 4, 8, 16]
    if order == "up":
        src = src.replace("int off = 16; off > 0; off >>= 1", "int off = 1; off < 32; off *= 2")
    every = kind == "xor"
    if every:
        src = src.replace("if (t == 0) { top[blockIdx.x] = v; top_at[blockIdx.x] = i; }",
                          "top[g] = v; top_at[g] = i;")  # fmt: skip
    b = _binding(32, 32 * 12)
    if every:
        b = binding_from_dict(
            {
                "kernel": "k",
                "launch": {"grid": ["ceil_div(n, 32)"], "block": [32]},
                "params": {
                    "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
                    "top": {"shape": ["n"], "dtype": "float32", "role": "out"},
                    "top_at": {"shape": ["n"], "dtype": "int32", "role": "out"},
                    "n": 32 * 12,
                },
            },
            path="<tree>",
        )
    res = lift_kernel(parse_source(src, "tree.cu"), "k", b)
    assert res.claimed and res.idiom == "reduce", [d.message for d in res.diagnostics]
    resolved = b.resolve(b.test_points()[0])
    inputs = generate_inputs(resolved, seed=3)
    inputs["x"] = x = _inputs(32 * 12, "ties")
    got = np.asarray(evaluate(res.kernel_ir, inputs, dict(resolved.scalars))["top_at"])
    want = _ladder(x, kind, cmp, offs)
    np.testing.assert_array_equal(got.astype(np.int64), want.ravel() if every else want[:, 0])
