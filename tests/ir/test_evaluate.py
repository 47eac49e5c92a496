"""The intent evaluator against NumPy references, for every corpus idiom."""

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.ir.evaluate import analyse, evaluate
from cuda2nki.ir.parser import parse

from .kernels import kernel

RNG = np.random.default_rng(1234)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def d(x):
    return np.asarray(x, dtype=np.float64)


def softmax_ref(x):
    x = d(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_vadd_and_locations():
    k = kernel("VADD")
    a, b = f32(37), f32(37)
    out = evaluate(k, {"a": a, "b": b})
    np.testing.assert_allclose(out["c"], d(a) + d(b), rtol=0, atol=0)
    assert k.body[0].loc.file == "vadd.cu" and k.body[0].loc.line == 5


def test_guarded_inout_keeps_unwritten_elements():
    k = kernel("SAXPY_GUARDED")
    x, y = f32(10), f32(10)
    out = evaluate(k, {"x": x, "y": y}, {"alpha": 2.5})["y"]
    ref = d(y).copy()
    ref[::2] = 2.5 * d(x[::2]) + d(y[::2])
    np.testing.assert_allclose(out, ref, rtol=1e-15)


@pytest.mark.parametrize("shape", [(3, 5), (17, 130), (1, 1)])
def test_softmax(shape):
    x = f32(*shape)
    out = evaluate(kernel("SOFTMAX"), {"x": x})["y"]
    np.testing.assert_allclose(out, softmax_ref(x), rtol=1e-13)


@pytest.mark.parametrize("mkn", [(4, 5, 3), (33, 17, 129), (1, 1, 1)])
def test_matmul_modes(mkn):
    m, k_, n = mkn
    a, b = f32(m, k_), f32(k_, n)
    k = kernel("MATMUL")
    out = evaluate(k, {"A": a, "B": b})["C"]
    np.testing.assert_allclose(out, d(a) @ d(b), rtol=1e-12, atol=1e-12)
    dec = evaluate(k, {"A": a, "B": b}, mode="declared")["C"]
    assert dec.dtype == np.float32
    np.testing.assert_allclose(dec, a @ b, rtol=1e-4, atol=1e-5)


def test_bf16_inputs_are_rounded_on_the_way_in():
    a, b = f32(8, 40), f32(40, 6)
    out = evaluate(kernel("MATMUL_BF16"), {"A": a, "B": b})["C"]
    ar = d(a.astype(ml_dtypes.bfloat16))
    br = d(b.astype(ml_dtypes.bfloat16))
    np.testing.assert_allclose(out, ar @ br, rtol=1e-12, atol=1e-12)


def test_transpose_colsum_total_gemv():
    a = f32(7, 9)
    np.testing.assert_array_equal(evaluate(kernel("TRANSPOSE"), {"A": a})["B"], d(a).T)
    np.testing.assert_allclose(evaluate(kernel("COLSUM"), {"x": a})["y"], d(a).sum(0), rtol=1e-13)
    v = f32(100)
    np.testing.assert_allclose(evaluate(kernel("TOTAL"), {"x": v})["out"], [d(v).sum()], rtol=1e-13)
    x = f32(9)
    np.testing.assert_allclose(
        evaluate(kernel("GEMV"), {"A": a, "x": x})["y"], d(a) @ d(x), rtol=1e-12
    )


def test_layernorm_and_rmsnorm():
    x, g, b = f32(6, 33), f32(33), f32(33)
    out = evaluate(kernel("LAYERNORM"), {"x": x, "g": g, "b": b}, {"eps": 1e-5})["y"]
    xd = d(x)
    mu = xd.mean(1, keepdims=True)
    var = ((xd - mu) ** 2).mean(1, keepdims=True)
    eps = float(np.float32(1e-5))
    ref = (xd - mu) / np.sqrt(var + eps) * d(g) + d(b)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    w = f32(33)
    out = evaluate(kernel("RMSNORM"), {"x": x, "w": w})["y"]
    ref = xd / np.sqrt((xd * xd).mean(1, keepdims=True) + float(np.float32(1e-6))) * d(w)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


def test_stencils_select_and_guard_mask_out_of_bounds_reads():
    x = f32(50)
    y = evaluate(kernel("STENCIL"), {"x": x})["y"]
    xd = d(x)
    ref = xd.copy()
    ref[1:-1] = (xd[:-2] + xd[1:-1] + xd[2:]) * float(np.float32(0.333333343))
    np.testing.assert_allclose(y, ref, rtol=1e-14)
    y2 = evaluate(kernel("STENCIL_GUARD"), {"x": x})["y"]
    ref2 = np.zeros(50)
    ref2[1:-1] = xd[:-2] - 2 * xd[1:-1] + xd[2:]
    np.testing.assert_allclose(y2, ref2, rtol=1e-14, atol=1e-15)


def test_unguarded_out_of_bounds_read_is_a_diagnostic():
    k = parse(
        "kernel k(x: in float32[N], y: out float32[N], N: int32) {\n"
        "  @2:3 stencil: y[i] = x[i + 1] for i < N;\n}",
        "k.ir",
    )
    with pytest.raises(DiagnosticError) as exc:
        evaluate(k, {"x": f32(4)})
    assert exc.value.diagnostic.code == "C2N2403"
    assert exc.value.diagnostic.loc.line == 2


def test_scans():
    x = f32(3, 11)
    out = evaluate(kernel("SCAN"), {"x": x})
    np.testing.assert_allclose(out["y"], np.cumsum(d(x), axis=1), rtol=1e-13)
    excl = np.maximum.accumulate(d(x), axis=1)
    ref = np.concatenate([np.full((3, 1), -np.inf), excl[:, :-1]], axis=1)
    np.testing.assert_array_equal(out["z"], ref)


def test_gather_and_histogram():
    table = f32(20, 4)
    idx = RNG.integers(0, 20, size=13).astype(np.int32)
    out = evaluate(kernel("GATHER"), {"table": table, "idx": idx})["out"]
    np.testing.assert_array_equal(out, d(table)[idx])
    x = RNG.integers(0, 1000, size=500).astype(np.int32)
    hist = evaluate(kernel("HISTOGRAM"), {"x": x}, {"B": 16})["hist"]
    np.testing.assert_array_equal(hist, np.bincount(x % 16, minlength=16))
    assert hist.dtype == np.int32


def test_gather_out_of_range_index_is_a_diagnostic():
    with pytest.raises(DiagnosticError) as exc:
        evaluate(kernel("GATHER"), {"table": f32(3, 2), "idx": np.array([0, 5], np.int32)})
    assert exc.value.diagnostic.code == "C2N2403"


def test_attention_scores_and_triangular_reduction():
    q, kk = f32(5, 16), f32(7, 16)
    out = evaluate(kernel("ATTENTION"), {"Q": q, "K": kk}, {"scale": 0.25})["P"]
    np.testing.assert_allclose(out, d(q) @ d(kk).T * 0.25, rtol=1e-12)
    x = f32(30)
    y = evaluate(kernel("TRIANGULAR"), {"x": x})["y"]
    np.testing.assert_allclose(y, np.cumsum(d(x)), rtol=1e-12)


def test_c_integer_semantics():
    k = parse("""
    kernel ints(a: in int32[N], b: in int32[N], q: out int32[N], r: out int32[N],
                w: out int32[N], N: int32) {
      map: q[i] = a[i] / b[i] for i < N;
      map: r[i] = a[i] % b[i] for i < N;
      map: w[i] = a[i] * 65536 for i < N;
    }""")
    a = np.array([7, -7, 7, -7, 40000], np.int32)
    b = np.array([2, 2, -2, -2, 3], np.int32)
    for mode in ("fp64", "declared"):
        out = evaluate(k, {"a": a, "b": b}, mode=mode)
        assert out["q"].tolist() == [3, -3, -3, 3, 13333]
        assert out["r"].tolist() == [1, -1, 1, -1, 1]
        assert out["w"][-1] == np.int32(np.int64(40000 * 65536).astype(np.int32))


def test_declared_mode_rounds_bf16_arithmetic():
    k = parse("""
    kernel acc(x: in bfloat16[N], y: out bfloat16[1], z: out float32[1], N: int32) {
      reduce: y[0] = reduce(add, i < N: x[i]);
      reduce: z[0] = reduce(add, i < N: cast(x[i], float32); acc float32);
    }""")
    x = np.full(4096, 1.0, np.float32)
    out = evaluate(k, {"x": x}, mode="declared")
    assert float(out["y"][0]) == 256.0  # bf16 accumulation stalls at 256 (+1 rounds away)
    assert float(out["z"][0]) == 4096.0
    assert evaluate(k, {"x": x})["y"][0] == 4096.0


def test_missing_and_mismatched_inputs():
    k = kernel("VADD")
    with pytest.raises(DiagnosticError) as exc:
        evaluate(k, {"a": f32(4)})
    assert exc.value.diagnostic.code == "C2N2401"
    with pytest.raises(DiagnosticError) as exc:
        evaluate(k, {"a": f32(4), "b": f32(5)})
    assert exc.value.diagnostic.code == "C2N2402"


def test_large_shapes_evaluate_whole():
    """Large domains go through the vectorised and chunked paths (their speed is measured in
    bench/bench_ir.py, not here): the results are the NumPy ones."""
    a, b = f32(512, 512), f32(512, 512)
    c = evaluate(kernel("MATMUL"), {"A": a, "B": b})["C"]
    np.testing.assert_allclose(c, d(a) @ d(b), rtol=1e-12, atol=1e-12)
    x = f32(2048, 2048)
    y = evaluate(kernel("SOFTMAX"), {"x": x})["y"]
    np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-13)


def test_analysis_reports_reduction_length_and_acc():
    a, b = f32(4, 300), f32(300, 3)
    an = analyse(kernel("MATMUL"), {"A": a, "B": b})
    assert an.reduction_length["C"] == 300 and an.acc_dtype["C"] == "float32"
    np.testing.assert_allclose(an.magnitude["C"], np.abs(d(a)) @ np.abs(d(b)), rtol=1e-12)


def test_triangular_domain():
    k = parse("""
    kernel tril(a: in float32[N, N], l: inout float32[N, N], N: int32) {
      map: l[i, j] = a[i, j] for i < N, j < i + 1;
    }""")
    a = f32(6, 6)
    out = evaluate(k, {"a": a, "l": np.zeros((6, 6), np.float32)})["l"]
    np.testing.assert_array_equal(out, np.tril(d(a)))
    from cuda2nki.ir.verify import verify

    assert verify(k) == []


@pytest.mark.parametrize("name", ["SOFTMAX", "VADD", "GATHER", "TRANSPOSE"])
def test_large_domains_run_in_slabs(monkeypatch, name):
    import cuda2nki.ir.evaluate as ev

    k = kernel(name)
    shapes = {"x": (9, 13), "a": (57,), "b": (57,), "table": (7, 3), "idx": (11,), "A": (9, 13)}
    inputs = {t.name: f32(*shapes[t.name]) for t in k.inputs if t.dtype != "int32"}
    inputs.update(
        {
            t.name: RNG.integers(0, 7, shapes[t.name]).astype(np.int32)
            for t in k.inputs
            if t.dtype == "int32"
        }
    )
    whole = evaluate(k, inputs)
    bound = ev.analyse(k, inputs).bound
    monkeypatch.setattr(ev, "CHUNK_ELEMENTS", 4)
    slabs = evaluate(k, inputs)
    for out in whole:
        np.testing.assert_allclose(slabs[out], whole[out], rtol=1e-14)  # reductions chunk too
        # the bound is order-independent: chunking the reductions must not change it
        np.testing.assert_allclose(ev.analyse(k, inputs).bound[out], bound[out], rtol=1e-9)


def test_rank_zero_tensors():
    k = parse("""kernel z(x: in float32[N], s: out float32[], t: out float32[], N: int32) {
      reduce: s[] = reduce(add, i < N: x[i]);
      map: t[] = s[] * 2.0;
    }""")
    x = np.arange(5, dtype=np.float32)
    out = evaluate(k, {"x": x})
    assert out["s"].shape == () and float(out["t"]) == 20.0


def test_out_of_bounds_read_inside_a_scan_reaches_later_positions():
    k = parse("""kernel s(x: in float32[N], y: out float32[N], N: int32) {
      scan: y[j] = scan(add, j: x[j * 2]) for scan j < N where index(j) == 0 || index(j) == N - 1;
    }""")
    with pytest.raises(DiagnosticError) as exc:
        evaluate(k, {"x": f32(6)})  # x[2 j] is out of range for j >= 3, masked there but summed
    assert exc.value.diagnostic.code == "C2N2403"


def test_reads_of_an_inout_tensor_see_its_kernel_entry_values():
    """The lifter resolves a thread's own earlier stores, so a later read of an inout tensor means
    its value at kernel entry (as generated ports read the input while writing the output)."""
    k = parse(
        """
kernel step(m: inout float32[N], g: in float32[N], p: inout float32[N], N: int32) {
  map: m[i] = 0.5 * m[i] + g[i] for i < N;
  map: p[i] = p[i] - (0.5 * m[i] + g[i]) for i < N;
}
""",
        "step.ir",
    )
    m, g, p = f32(9), f32(9), f32(9)
    new_m = 0.5 * d(m) + d(g)
    out = evaluate(k, {"m": m, "g": g, "p": p})
    np.testing.assert_allclose(out["m"], new_m, rtol=1e-15)
    np.testing.assert_allclose(out["p"], d(p) - new_m, rtol=1e-15)
    an = analyse(k, {"m": m, "g": g, "p": p})
    np.testing.assert_allclose(an.values["p"], d(p) - new_m, rtol=1e-15)
    assert np.all(an.bound["p"] < 1e-5)
