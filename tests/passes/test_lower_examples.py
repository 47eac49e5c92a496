"""End to end on hand-written intent kernels: passes -> NKI -> simulator, against NumPy.

Shapes include sizes that are not multiples of 128 / 512 and contractions with K > 128.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.passes import intent_examples as ex
from tests.passes.harness import close, port, simulate

RNG = np.random.default_rng(7)
TARGETS = ("nki", "legacy")


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [129, 5000, 65536 + 517])
def test_saxpy_flat_with_tails(tmp_path, target, n):
    path, src, _, _ = port(ex.saxpy(), tmp_path, target)
    x, y = f32(n), f32(n)
    out = simulate(path, "saxpy", {"x": x, "y": y}, alpha=2.5)
    close(out, 2.5 * x.astype(np.float64) + y)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(130, 77), (128, 4100), (3, 5)])
def test_bias_gelu_2d_broadcast(tmp_path, target, shape):
    path, src, _, _ = port(ex.bias_gelu(), tmp_path, target)
    x, b = f32(*shape), f32(shape[1])
    z = x.astype(np.float64) + b
    ref = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))
    close(simulate(path, "bias_gelu", {"in_": x, "bias": b}), ref, 1e-4, 1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(300, 77), (128, 1000), (5, 513)])
def test_softmax_rows(tmp_path, target, shape):
    path, src, _, _ = port(ex.softmax(), tmp_path, target)
    x = f32(*shape)
    e = np.exp(x - x.max(1, keepdims=True))
    close(simulate(path, "softmax", {"x": x}), e / e.sum(1, keepdims=True))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(200, 96), (128, 513), (7, 33)])
def test_layernorm_rows(tmp_path, target, shape):
    path, src, _, _ = port(ex.layernorm(), tmp_path, target)
    x, g, b = f32(*shape), f32(shape[1]), f32(shape[1])
    xd = x.astype(np.float64)
    mu = xd.mean(1, keepdims=True)
    ref = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(1, keepdims=True) + 1e-5) * g + b
    out = simulate(path, "layernorm", {"x": x, "gamma": g, "beta": b}, eps=1e-5)
    close(out, ref, 1e-4, 1e-4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mkn", [(130, 300, 600), (64, 128, 512), (5, 257, 7)])
def test_matmul_bf16_psum(tmp_path, target, mkn):
    m, k, n = mkn
    path, src, sched, _ = port(ex.matmul(), tmp_path, target)
    a = f32(m, k).astype(ml_dtypes.bfloat16)
    b = f32(k, n).astype(ml_dtypes.bfloat16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    close(simulate(path, "matmul", {"A": a, "B": b}), ref, 1e-4, 1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_matmul_transposed_b_fp32(tmp_path, target):
    path, src, _, diags = port(ex.matmul("float32", transposed_b=True), tmp_path, target)
    a, b = f32(70, 200), f32(130, 200)
    close(simulate(path, "matmul", {"A": a, "B": b}), a.astype(np.float64) @ b.T, 1e-4, 1e-4)
    assert any(d.code == "C2N2506" for d in diags)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mk", [(300, 200), (128, 128), (3, 1000)])
def test_gemv(tmp_path, target, mk):
    m, k = mk
    path, src, _, _ = port(ex.gemv(), tmp_path, target)
    a, x = f32(m, k), f32(k)
    close(simulate(path, "gemv", {"A": a, "x": x}), a.astype(np.float64) @ x, 1e-4, 1e-4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(300, 77), (128, 256), (1, 5)])
def test_transpose_blocks(tmp_path, target, shape):
    path, src, _, _ = port(ex.transpose(), tmp_path, target)
    a = f32(*shape)
    close(simulate(path, "transpose", {"A": a}), a.T, 0, 0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [130, 5000, 66000])
def test_stencil_1d_shifted_reads(tmp_path, target, n):
    path, src, _, _ = port(ex.stencil_1d(), tmp_path, target)
    x = f32(n)
    out = np.asarray(simulate(path, "stencil_1d", {"x": x}))
    ref = (x[:-2].astype(np.float64) + x[1:-1] + x[2:]) / 3
    close(out[1:-1], ref)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(130, 40), (5, 700), (129, 129)])
def test_stencil_2d_shifted_rows_and_columns(tmp_path, target, shape):
    path, src, _, _ = port(ex.stencil_2d(), tmp_path, target)
    u = f32(*shape).astype(np.float64)
    out = np.asarray(simulate(path, "stencil_2d", {"u": u.astype(np.float32)}))
    ref = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    close(out[1:-1, 1:-1], ref, 1e-5, 1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("h", [1, 200, 1000])
def test_strided_and_broadcast_element(tmp_path, target, h):
    path, src, _, _ = port(ex.pair_sum(), tmp_path, target)
    x = f32(2 * h)
    close(simulate(path, "pair_sum", {"x": x}), x[0::2].astype(np.float64) + x[1::2] - x[0])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [1, 1000, 70000])
def test_whole_vector_reduction_with_epilogue(tmp_path, target, n):
    path, src, _, _ = port(ex.dot(), tmp_path, target)
    x, y = f32(n), f32(n)
    out = simulate(path, "dot", {"x": x, "y": y})
    close(np.asarray(out).reshape(1), [np.dot(x.astype(np.float64), y) / n], 1e-4, 1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [3, 513, 66000])
def test_accumulating_max_keeps_the_old_value(tmp_path, target, n):
    path, src, _, _ = port(ex.atomic_max(), tmp_path, target)
    x = f32(n)
    for old in (0.0, 100.0):
        out = simulate(path, "atomic_max", {"x": x, "out": np.array([old], np.float32)})
        close(np.asarray(out).reshape(1), [max(old, np.abs(x).max())])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("btcv", [(4, 32, 96, 500), (2, 130, 7, 50), (1, 1, 600, 3)])
def test_gather_with_clamped_index_on_a_3d_domain(tmp_path, target, btcv):
    b, t, c, v = btcv
    path, src, _, _ = port(ex.encoder(), tmp_path, target)
    inp = RNG.integers(-3, v + 3, size=(b, t)).astype(np.int32)
    wte, wpe = f32(v, c), f32(t, c)
    out = simulate(path, "encoder_forward", {"inp": inp, "wte": wte, "wpe": wpe})
    close(out, wte[np.clip(inp, 0, v - 1)].astype(np.float64) + wpe[None])


def _ir_kernel(name: str):
    from tests.ir.kernels import kernel

    return kernel(name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(130, 70), (3, 600), (128, 1)])
def test_row_scans_inclusive_and_exclusive(tmp_path, target, shape):
    path, src, _, _ = port(_ir_kernel("SCAN"), tmp_path, target)
    x = f32(*shape)
    y, z = simulate(path, "cumsum", {"x": x})
    close(y, np.cumsum(x.astype(np.float64), axis=1), 1e-5, 1e-4)
    want = np.concatenate(
        [np.full((shape[0], 1), -np.inf), np.maximum.accumulate(x, axis=1)[:, :-1]], 1
    )
    np.testing.assert_array_equal(np.asarray(z), want.astype(np.float32))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(300, 70), (5, 1000), (128, 512)])
def test_column_sum_on_the_tensor_engine(tmp_path, target, shape):
    path, src, _, _ = port(_ir_kernel("COLSUM"), tmp_path, target)
    x = f32(*shape)
    close(np.asarray(simulate(path, "colsum", {"x": x})), x.astype(np.float64).sum(0), 1e-4, 1e-4)
    assert "nc_matmul" in src


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(130, 70), (7, 300)])
def test_rmsnorm_is_a_row_reduction_not_a_matmul(tmp_path, target, shape):
    path, src, _, _ = port(_ir_kernel("RMSNORM"), tmp_path, target)
    x, w = f32(*shape), f32(shape[1])
    xd = x.astype(np.float64)
    ref = xd / np.sqrt((xd**2).mean(1, keepdims=True) + 1e-6) * w
    close(simulate(path, "rmsnorm", {"x": x, "w": w}), ref, 1e-4, 1e-5)
    assert "nc_matmul" not in src


@pytest.mark.parametrize("target", TARGETS)
def test_attention_scores_epilogue(tmp_path, target):
    path, src, _, _ = port(_ir_kernel("ATTENTION"), tmp_path, target)
    q, k = f32(130, 40), f32(200, 40)
    out = simulate(path, "scores", {"Q": q, "K": k}, scale=0.125)
    close(out, (q.astype(np.float64) @ k.T) * 0.125, 1e-4, 1e-4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [1, 301, 5000])
def test_guarded_inout_keeps_unwritten_elements(tmp_path, target, n):
    path, src, _, _ = port(_ir_kernel("SAXPY_GUARDED"), tmp_path, target)
    x, y = f32(n), f32(n)
    out = np.asarray(simulate(path, "saxpy", {"x": x, "y": y}, alpha=1.5))
    ref = y.astype(np.float64).copy()
    ref[0::2] = 1.5 * x[0::2].astype(np.float64) + y[0::2]
    close(out, ref)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["STENCIL", "STENCIL_GUARD"])
@pytest.mark.parametrize("n", [3, 300, 70000])
def test_index_guards_become_domains(tmp_path, target, name, n):
    k = _ir_kernel(name)
    path, src, _, _ = port(k, tmp_path, target)
    x = f32(n).astype(np.float64)
    out = np.asarray(simulate(path, k.name, {"x": x.astype(np.float32)}))
    if name == "STENCIL":
        ref = x.copy()
        ref[1:-1] = (x[:-2] + x[1:-1] + x[2:]) * np.float32(0.333333343)
        close(out, ref, 1e-5, 1e-5)
    else:
        close(out[1:-1], x[:-2] - 2 * x[1:-1] + x[2:], 1e-5, 1e-5)


PARTIAL = """
kernel partial_sums(inp: in float32[n], partial: out float32[ceildiv(n, 256)], n: int32) {
  reduce: partial[b] = reduce(add, t < 256: inp[256 * b + t]; where index(256 * b + t) < n)
          for b < ceildiv(n, 256);
}
"""

FLAT2D = """
kernel scale_rows(x: in float32[R * C], s: in float32[R], y: out float32[R * C], R: int32, C: int32) {
  map: y[C * i + j] = x[C * i + j] * s[i] for i < R, j < C;
}
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [129, 1000, 16384, 70000])
def test_per_block_partial_sums_with_a_ragged_last_block(tmp_path, target, n):
    from cuda2nki.ir.parser import parse

    path, src, _, _ = port(parse(PARTIAL), tmp_path, target)
    x = f32(n)
    out = np.asarray(simulate(path, "partial_sums", {"inp": x}))
    pad = np.zeros(-(-n // 256) * 256)
    pad[:n] = x
    close(out, pad.reshape(-1, 256).sum(1), 1e-5, 1e-4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rc", [(130, 70), (3, 1000)])
def test_row_major_flattened_indices(tmp_path, target, rc):
    from cuda2nki.ir.parser import parse

    r, c = rc
    path, src, _, _ = port(parse(FLAT2D), tmp_path, target)
    x, s = f32(r * c), f32(r)
    out = simulate(path, "scale_rows", {"x": x, "s": s})
    close(out, (x.reshape(r, c).astype(np.float64) * s[:, None]).reshape(-1))


BLOCKSCAN = """
kernel block_scan(inp: in float32[n], out: out float32[n], n: int32) {
  scan: out[512 * b + t] = scan(add, t: inp[512 * b + t]; exclusive) for b < ceildiv(n, 512), scan t < 512
        where index(512 * b + t) < n;
}
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [100, 1024, 70001])
def test_block_exclusive_scan_with_ragged_last_block(tmp_path, target, n):
    from cuda2nki.ir.parser import parse

    path, src, _, _ = port(parse(BLOCKSCAN), tmp_path, target)
    x = f32(n)
    out = np.asarray(simulate(path, "block_scan", {"inp": x}))
    pad = np.zeros(-(-n // 512) * 512)
    pad[:n] = x
    blocks = pad.reshape(-1, 512)
    ref = (np.cumsum(blocks, axis=1) - blocks).reshape(-1)[:n]
    close(out, ref, 1e-5, 1e-4)


HILLIS = """
kernel scan_hs(inp: in float32[n], out: out float32[n], n: int32) {
  scan: out[256 * b + t] = scan(add, t: select(index(256 * b + t) < n, inp[256 * b + t], 0.0))
        for b < ceildiv(n, 256), scan t < 256 where index(256 * b + t) < n;
}
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [100, 256, 5000])
def test_block_scan_of_a_guarded_read(tmp_path, target, n):
    from cuda2nki.ir.parser import parse

    path, src, _, _ = port(parse(HILLIS), tmp_path, target)
    x = f32(n)
    pad = np.zeros(-(-n // 256) * 256)
    pad[:n] = x
    ref = np.cumsum(pad.reshape(-1, 256), axis=1).reshape(-1)[:n]
    close(np.asarray(simulate(path, "scan_hs", {"inp": x})), ref, 1e-5, 1e-4)


BMM = """
kernel bmm(A: in float32[Z, M, K], B: in float32[Z, N, K], C: out float32[Z, M, N],
           Z: int32, M: int32, N: int32, K: int32) {
  contract: C[b, i, j] = reduce(add, k < K: A[b, i, k] * B[b, j, k]; acc float32) for b < Z, i < M, j < N;
}
"""

TRANSPOSED_READ = """
kernel tr(out: out float32[C, R], inp: in float32[R, C], R: int32, C: int32) {
  transpose: out[i, j] = inp[j, i] for i < C, j < R;
}
"""

AXPBY_LD = """
kernel axpby(A: in float32[R, L], B: inout float32[R, L], alpha: float32, beta: float32,
             R: int32, C: int32, L: int32) {
  map: B[i, j] = alpha * A[i, j] + beta * B[i, j] for i < R, j < C;
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_batched_matmul_with_transposed_right_operand(tmp_path, target):
    from cuda2nki.ir.parser import parse

    path, src, _, _ = port(parse(BMM), tmp_path, target)
    a, b = f32(2, 130, 200), f32(2, 70, 200)
    close(
        simulate(path, "bmm", {"A": a, "B": b}),
        np.einsum("zik,zjk->zij", a.astype(np.float64), b),
        1e-4,
        1e-4,
    )


@pytest.mark.parametrize("target", TARGETS)
def test_transpose_written_through_a_transposed_read(tmp_path, target):
    from cuda2nki.ir.parser import parse

    path, src, _, _ = port(parse(TRANSPOSED_READ), tmp_path, target)
    x = f32(130, 70)
    close(simulate(path, "tr", {"inp": x}), x.T, 0, 0)


@pytest.mark.parametrize("target", TARGETS)
def test_inout_columns_outside_the_domain_keep_their_values(tmp_path, target):
    from cuda2nki.ir.parser import parse

    path, src, _, _ = port(parse(AXPBY_LD), tmp_path, target)
    a, b = f32(65, 64), f32(65, 64)
    ref = b.astype(np.float64).copy()
    ref[:, :31] = 0.5 * a[:, :31] - 2.0 * b[:, :31]
    out = simulate(path, "axpby", {"A": a, "B": b, "C": 31}, alpha=0.5, beta=-2.0)
    close(out, ref)
