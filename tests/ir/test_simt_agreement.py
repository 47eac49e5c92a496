"""Hand-written intent IR of corpus kernels against the SIMT interpreter running the CUDA source:
the interpreter's fp32 results lie within the IR-derived bound of the fp64 oracle (c = 1: one
implementation against the exact result), on every test point of the binding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.ir.evaluate import analyse
from cuda2nki.ir.parser import parse

ROOT = Path(__file__).resolve().parents[2]

INTENT = {
    "linalg/matmul_tiled": """
kernel matmul_tiled(C: out float32[M, N], A: in float32[M, K], B: in float32[K, N],
                    M: int32, N: int32, K: int32) {
  contract: C[i, j] = reduce(add, k < K: A[i, k] * B[k, j]; acc float32) for i < M, j < N;
}""",
    "norm/layernorm": """
kernel layernorm_forward(out: out float32[N, C], mean: out float32[N], rstd: out float32[N],
                         inp: in float32[N, C], weight: in float32[C], bias: in float32[C],
                         N: int32, C: int32) {
  norm: mean[r] = reduce(add, c < C: inp[r, c]) / cast(index(C), float32) for r < N;
  norm: rstd[r] = rsqrt(reduce(add, c < C: square(inp[r, c] - mean[r]))
                        / cast(index(C), float32) + 1e-05) for r < N;
  norm: out[r, c] = (inp[r, c] - mean[r]) * rstd[r] * weight[c] + bias[c] for r < N, c < C;
}""",
    "norm/causal_softmax_warp": """
kernel causal_softmax_warp(probs: out float32[BH, T, T], att: in float32[BH, T, T],
                           BH: int32, T: int32, scale: float32) {
  temp m: float32[BH, T];
  temp d: float32[BH, T];
  softmax: m[b, t] = reduce(max, s < t + 1: att[b, t, s] * scale) for b < BH, t < T;
  softmax: d[b, t] = reduce(add, s < t + 1: exp(att[b, t, s] * scale - m[b, t]))
           for b < BH, t < T;
  softmax: probs[b, t, s] = select(index(s) <= index(t),
                                   exp(att[b, t, s] * scale - m[b, t]) * (1.0 / d[b, t]), 0.0)
           for b < BH, t < T, s < T;
}""",
    "scan/scan_hillis_steele": """
kernel scan_hillis_steele(in: in float32[n], out: out float32[n], n: int32) {
  scan: out[b * 256 + j] = scan(add, j: in[b * 256 + j]) for b < ceildiv(n, 256), scan j < 256
        where index(b * 256 + j) < n;
}""",
    "misc/histogram_shared": """
kernel histogram_shared(keys: in int32[n], hist: inout int32[nbins], n: int32, nbins: int32) {
  scatter: hist[$(keys[i])] add= 1 for i < n;
}""",
}


@pytest.mark.parametrize("name", sorted(INTENT))
def test_simt_results_lie_within_the_bound(name):
    api = pytest.importorskip("cuda2nki.api")
    from cuda2nki.binding import generate_inputs, load_binding

    path = ROOT / "corpus" / f"{name}.cu"
    binding = load_binding(path.with_suffix(".toml"))
    k = parse(INTENT[name], name)
    for point in binding.test_points():
        resolved = binding.resolve(point)
        arrays = generate_inputs(resolved, seed=1)
        simt = api.run(path, binding, overrides=point, inputs=arrays)
        inputs = {t.name: arrays[t.name] for t in k.inputs}  # in and inout
        an = analyse(k, inputs, dict(resolved.scalars))
        for out, exact in an.values.items():
            got = np.asarray(simt[out], np.float64)
            with np.errstate(invalid="ignore"):
                diff = np.where(got == exact, 0.0, np.abs(got - exact))
            worst = float(np.max(diff / np.maximum(an.bound[out], 1e-300)))
            assert np.all(diff <= an.bound[out]), (out, point, worst)
