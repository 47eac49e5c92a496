"""Naive GEMMs that stride their second matrix by the contraction length (``B[i * K + col]``)
while their columns run to another size (``col < M``): correct only when the two sizes are equal,
so the binding ties one to the other (``M = { tie = "K" }``) and the kernel lowers to a matmul."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.binding import binding_from_dict
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: `{row}`/`{col}` come from y/x (or x/y), `{i}` names the loop, `{w}`/`{k}` the two sizes
KERNEL = """
__global__ void gemm_naive(const float *A, const float *B, float *C, int {n}, int {w}, int {k},
                           float alpha, float beta)
{{
    int {col} = blockIdx.{cx} * blockDim.{cx} + threadIdx.{cx};
    int {row} = blockIdx.{rx} * blockDim.{rx} + threadIdx.{rx};
    float acc = 0.f;
    for (int {i} = 0; {i} < {k}; {i}++)
        acc += A[{row} * {k} + {i}] * B[{i} * {k} + {col}];
    C[{row} * {w} + {col}] = alpha * acc + beta * C[{row} * {w} + {col}];
}}
"""

SPELLINGS = {
    "NMK-col-from-x": dict(n="N", w="M", k="K", col="col", row="row", cx="x", rx="y", i="i"),
    "width-col-from-y": dict(
        n="rows", w="width", k="inner", col="c", row="r", cx="y", rx="x", i="e"
    ),
}


def _binding(names: dict, tie: bool) -> dict:
    grid = [f"{names['w']} / 16", f"{names['n']} / 16"]
    if names["cx"] == "y":
        grid.reverse()
    k, w, n = names["k"], names["w"], names["n"]
    return {
        "kernel": "gemm_naive",
        "launch": {"grid": grid, "block": [16, 16]},
        "params": {
            "A": {"shape": [n, k], "dtype": "float32", "role": "in"},
            "B": {
                "shape": [k, k] if tie else [f"{k}*{k}-{k}+{w}"],
                "dtype": "float32",
                "role": "in",
            },
            "C": {"shape": [n, k if tie else w], "dtype": "float32", "role": "inout"},
            n: 64,
            w: {"tie": k} if tie else 64,
            k: 64,
            "alpha": 2.0,
            "beta": 1.0,
        },
        "check": {"multiples": {n: 16, k: 16} if tie else {n: 16, w: 16}},
    }


def test_a_tied_size_follows_its_size_at_every_point() -> None:
    b = binding_from_dict(_binding(SPELLINGS["NMK-col-from-x"], tie=True))
    assert b.defaults["M"] == 64
    r = b.resolve({"K": 144, "M": 3})
    assert r.scalars["M"] == 144 and r.shapes["B"] == (144, 144) and r.grid[0] == 9


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_square_stride_gemm_lowers_to_a_matmul_once_its_sizes_are_tied(
    tmp_path: Path, name: str
) -> None:
    names = SPELLINGS[name]
    src = tmp_path / "g.cu"
    src.write_text(KERNEL.format(**names))
    tied = api.port(
        str(src), kernel="gemm_naive", binding=binding_from_dict(_binding(names, tie=True))
    )
    assert "lifted as contract" in " ".join(d.message for d in tied.diagnostics)
    assert tied.source is not None and "nc_matmul" in tied.source


#: hosts launching the kernel above; `{w}`/`{n}`/`{k}` are the sizes' names
HOST = """
void launch(const float *A, const float *B, float *C, int {n}, int {w}, int {k}) {{
    dim3 block(16, 16);
    dim3 grid({gx} / block.x, {gy} / block.y);
    gemm_naive<<<grid, block>>>(A, B, C, {n}, {w}, {k}, 2.f, 1.f);
}}
"""

#: a guarded spelling with ragged edges: the grid rounds up and the guard bounds `col`
GUARDED = """
__global__ void gemm_naive(const float *A, const float *B, float *C, int N, int M, int K,
                           float alpha, float beta)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < N && col < M) {
        float s = 0.f;
        for (int t = 0; t < K; ++t) s += A[row * K + t] * B[t * K + col];
        C[row * M + col] = alpha * s + beta * C[row * M + col];
    }
}
void launch(const float *A, const float *B, float *C, int N, int M, int K) {
    dim3 block(8, 8);
    dim3 grid((M + 7) / 8, (N + 7) / 8);
    gemm_naive<<<grid, block>>>(A, B, C, N, M, K, 1.f, 0.f);
}
"""


def _host(names: dict) -> str:
    gx, gy = (names["w"], names["n"]) if names["cx"] == "x" else (names["n"], names["w"])
    return HOST.format(gx=gx, gy=gy, **names)


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_inference_ties_the_column_size_to_the_square_stride(name: str) -> None:
    names = SPELLINGS[name]
    tu = parse_source(KERNEL.format(**names) + _host(names), "g.cu")
    partial, diags = infer_binding(tu, "gemm_naive")
    k, w, n = names["k"], names["w"], names["n"]
    p = partial["params"]
    assert p[w] == {"tie": k}
    assert p["B"]["shape"] == [k, k] and p["C"]["shape"] == [n, k] and p["A"]["shape"] == [n, k]
    assert w not in " ".join(map(str, partial["launch"]["grid"]))
    assert any(f"{w} tied to {k}" in d.message for d in diags)
    b, _ = binding_from_inference(tu, "gemm_naive")
    assert b is not None and b.resolve({k: 48}).scalars[w] == 48


def test_a_guarded_ragged_gemm_is_tied_too() -> None:
    partial, _ = infer_binding(parse_source(GUARDED, "g.cu"), "gemm_naive")
    assert partial["params"]["M"] == {"tie": "K"}
    assert partial["params"]["B"]["shape"] == ["K", "K"]


NOT_TIED = {
    # every access agrees with its sizes: nothing to tie
    "consistent-gemm": GUARDED.replace("B[t * K + col]", "B[t * M + col]"),
    # a sliding window reads overlapping rows on purpose: the window index is a loop variable
    "sliding-window": """
__global__ void window(const float *x, const float *w, float *y, int n, int S, int W) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o < n) {
        float s = 0.f;
        for (int k = 0; k < W; ++k) s += x[o * S + k] * w[k];
        y[o] = s;
    }
}
void launch(const float *x, const float *w, float *y, int n) {
    window<<<(n + 127) / 128, 128>>>(x, w, y, n, 2, 5);
}
""",
    # the host runs the kernel with different sizes: it means the overlap
    "host-sizes-differ": GUARDED
    + """
int main() { float *a, *b, *c; launch(a, b, c, 64, 32, 48); }
""",
}


@pytest.mark.parametrize("name", sorted(NOT_TIED))
def test_sizes_are_not_tied_without_the_evidence(name: str) -> None:
    tu = parse_source(NOT_TIED[name], "g.cu")
    kernel = tu.kernels[0].name
    partial, diags = infer_binding(tu, kernel)
    assert not any("tie" in str(v) for v in partial["params"].values()), partial
    assert not any("tied to" in d.message for d in diags)
