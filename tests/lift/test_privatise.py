"""Shared-memory accumulators of loops become registers before the lift (``privatise``).

``s[tid] += x[i]`` in a grid- or block-stride loop is a per-thread accumulation the lifter
follows once it is held in a register; the rewrite applies only where each thread owns its
element and nothing else in the loop can see it.  A barrier under a block-uniform condition
(one block per row, ``if (row < rows)`` or an early ``return`` of the whole block) no longer
stops the lift either.
"""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.lift.privatise import privatised
from tests.port.acceptance import grid_binding, port_variant, tensor_param

TREE = """
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        __syncthreads();
        if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
    }
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}
"""

# per-row sums, one block per row: three spellings of the accumulation loop
ROW_FOR = (
    """
__global__ void k(const float* m, float* out, int rows, int cols) {
    __shared__ float sh[128];
    int t = threadIdx.x;
    sh[t] = 0.0f;
    for (int c = t; c < cols; c += blockDim.x) sh[t] += m[blockIdx.x * cols + c];
"""
    + TREE
)
ROW_WHILE_GUARDED = """
__global__ void k(const float* m, float* out, int rows, int cols) {
    __shared__ float sh[128];
    const int row = blockIdx.x;
    if (row < rows) {
        const int me = threadIdx.x;
        sh[me] = 0.0f;
        size_t c = me;
        while (c < cols) {
            sh[me] = sh[me] + 2.0f * m[row * cols + c];
            c += 128;
        }
        for (int h = 64; h > 0; h /= 2) {
            __syncthreads();
            if (me < h) sh[me] += sh[me + h];
        }
        if (me == 0) out[row] = sh[0];
    }
}
"""
ROW_2D = """
__global__ void k(const float* m, float* out, int rows, int cols) {
    __shared__ float sh[1][128];
    if (blockIdx.x >= rows) return;
    sh[threadIdx.y][threadIdx.x] = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 128) {
        float v = m[blockIdx.x * cols + c];
        sh[threadIdx.y][threadIdx.x] += v * v;
    }
    for (int h = 64; h > 0; h >>= 1) {
        __syncthreads();
        if (threadIdx.x < h) sh[0][threadIdx.x] += sh[0][threadIdx.x + h];
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sh[0][0];
}
"""


def _rows() -> dict:
    params = {
        "m": tensor_param(["rows", "cols"], "in"),
        "out": tensor_param(["rows"], "out"),
        "rows": 100,
        "cols": 300,
    }
    return grid_binding(["rows"], params, [{"rows": 129, "cols": 257}, {"rows": 3, "cols": 7}])


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "src", [ROW_FOR, ROW_WHILE_GUARDED, ROW_2D], ids=["for", "while_guarded", "two_d"]
)
def test_shared_accumulation_ports_through_the_recogniser(src, target, tmp_path) -> None:
    res, run, points = port_variant("reduce/smem_accum", src, _rows(), target, tmp_path, 1e-4)
    assert res.idiom in ("reduce", "contract") and not res.literal, [
        d.message for d in res.diagnostics
    ]
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def _kernel(body: str) -> A.Function:
    src = (
        "__global__ void k(const float* x, float* out, int n) {\n"
        "    __shared__ float sh[256];\n    int t = threadIdx.x;\n    int i = t;\n"
        f"{body}\n}}\n"
    )
    return parse_source(src, "k.cu").function("k")


def _registers(fn: A.Function) -> list[str]:
    from cuda2nki.frontend.visit import walk as _walk

    return [n.name for n in _walk(fn.body) if isinstance(n, A.VarDecl) and "priv" in n.name]


def test_the_store_before_the_loop_initialises_the_register() -> None:
    fn = privatised(_kernel("    sh[t] = 1.0f;\n    for (; i < n; i += 256) sh[t] += x[i];"))
    (reg,) = _registers(fn)
    decl = next(s for s in fn.body.body if isinstance(s, A.VarDecl) and s.name == reg)
    assert isinstance(decl.init, A.FloatLit) and decl.init.value == 1.0


@pytest.mark.parametrize(
    "body",
    [
        # a barrier in the loop: other threads may read the element between iterations
        "    for (; i < n; i += 256) { sh[t] += x[i]; __syncthreads(); }",
        # two elements: another thread's slot is read
        "    for (; i < n; i += 256) sh[t] += sh[t + 1] + x[i];",
        # the element's address escapes
        "    for (; i < n; i += 256) atomicAdd(&sh[t], x[i]);",
        # one element for all threads: a race in CUDA, not a per-thread accumulator
        "    for (; i < n; i += 256) sh[0] += x[i];",
        # the index moves in the loop
        "    for (; i < n; i += 256) { sh[i % 256] += x[i]; }",
        # a return in the loop would skip the write-back
        "    for (; i < n; i += 256) { if (x[i] < 0.0f) return; sh[t] += x[i]; }",
    ],
)
def test_not_privatised(body: str) -> None:
    fn = _kernel(body)
    assert privatised(fn) is fn


def test_privatised_kernel_runs_as_the_original() -> None:
    import numpy as np

    from cuda2nki.frontend.ast import TranslationUnit
    from cuda2nki.simt import run_kernel

    src = ROW_WHILE_GUARDED
    tu = parse_source(src, "k.cu")
    fn = privatised(tu.function("k"))
    assert _registers(fn)
    tu2 = TranslationUnit(file=tu.file, functions=(fn,))
    rng = np.random.default_rng(0)
    m = rng.standard_normal((5, 300)).astype(np.float32)
    args = {"m": m, "rows": 5, "cols": 300}
    want = run_kernel(
        tu, "k", grid=(6, 1, 1), block=(128, 1, 1), args={**args, "out": np.zeros(5, np.float32)}
    )
    got = run_kernel(
        tu2, "k", grid=(6, 1, 1), block=(128, 1, 1), args={**args, "out": np.zeros(5, np.float32)}
    )
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-6)
