"""Direct execution of scheduled tiles against NumPy and against the intent evaluator."""

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.parser import parse
from cuda2nki.ir.verify import verify

from .kernels import kernel
from .test_verify import SCHED_MM, SCHED_OK

RNG = np.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("n", [300, 128, 5])
def test_ragged_tiled_vadd_matches_numpy(n):
    a, b = f32(n, 7), f32(n, 7)
    out = evaluate_tiles(parse(SCHED_OK), {"a": a, "b": b})["c"]
    np.testing.assert_array_equal(out, a + b)


def test_tiled_bf16_matmul_matches_fp32_accumulation():
    import ml_dtypes

    a, b = f32(384, 256), f32(384, 1024)
    out = evaluate_tiles(parse(SCHED_MM), {"A": a, "B": b})["C"]
    ar = a.astype(ml_dtypes.bfloat16).astype(np.float64)
    br = b.astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(out, ar.T @ br, rtol=2e-5, atol=2e-4)


SOFTMAX_TILES = """
kernel softmax(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {
  alloc t: float32[128, C] sbuf;
  alloc mx: float32[128, 1] sbuf;
  alloc nmx: float32[128, 1] sbuf;
  alloc e: float32[128, C] sbuf;
  alloc s: float32[128, 1] sbuf;
  alloc o: float32[128, C] sbuf;
  load(dst=t[ds(0, R), ds(0, C)], src=x[...]);
  tensor_reduce(dst=mx[ds(0, R), ds(0, 1)], op=max, src=t[ds(0, R), ds(0, C)], axes=(1,));
  tensor_scalar(dst=nmx[ds(0, R), ds(0, 1)], src=mx[ds(0, R), ds(0, 1)], op0=mul, operand0=-1.0);
  activation(dst=e[ds(0, R), ds(0, C)], op=exp, src=t[ds(0, R), ds(0, C)],
             bias=nmx[ds(0, R), ds(0, 1)], reduce_dst=s[ds(0, R), ds(0, 1)]);
  tensor_scalar(dst=o[ds(0, R), ds(0, C)], src=e[ds(0, R), ds(0, C)], op0=div,
                operand0=s[ds(0, R), ds(0, 1)]);
  store(dst=y[...], src=o[ds(0, R), ds(0, C)]);
}
"""


def test_softmax_tiles_match_the_intent_evaluator():
    k = parse(SOFTMAX_TILES)
    assert verify(k) == []
    x = f32(100, 64)
    out = evaluate_tiles(k, {"x": x})["y"]
    ref = evaluate(kernel("SOFTMAX"), {"x": x})["y"]
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-7)


def test_transpose_iota_select_scan_copy():
    k = parse("""
    kernel misc(x: in float32[64, 32], t: out float32[32, 64], io: out int32[4, 6],
                sel: out float32[64, 32], cs: out float32[64, 32]) {
      alloc a: float32[64, 32] sbuf;
      alloc p: float32[32, 64] psum;
      alloc ts: float32[32, 64] sbuf;
      alloc i: int32[4, 6] sbuf;
      alloc z: float32[64, 32] sbuf;
      alloc c: float32[64, 32] sbuf;
      load(dst=a[...], src=x[...]);
      tensor_transpose(dst=p[...], src=a[...]);
      tensor_copy(dst=ts[...], src=p[...]);
      store(dst=t[...], src=ts[...]);
      iota(dst=i[...], pattern=((2, 6),), offset=1, channel_multiplier=100);
      store(dst=io[...], src=i[...]);
      tensor_select(dst=z[...], pred=a[...], on_true=1.0, on_false=a[...]);
      store(dst=sel[...], src=z[...]);
      tensor_scan(dst=c[...], src=a[...], op=add, initial=0.0);
      store(dst=cs[...], src=c[...]);
    }""")
    x = f32(64, 32)
    x[0, 0] = 0.0
    out = evaluate_tiles(k, {"x": x})
    np.testing.assert_array_equal(out["t"], x.T)
    np.testing.assert_array_equal(out["io"], 1 + 100 * np.arange(4)[:, None] + 2 * np.arange(6))
    np.testing.assert_array_equal(out["sel"], np.where(x != 0, 1.0, x))
    np.testing.assert_allclose(out["cs"], np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)


def test_indirect_gather_and_scatter_add():
    k = parse("""
    kernel gs(table: in float32[10, 4], idx: in int32[6, 1], g: out float32[6, 4],
              h: inout float32[10, 4]) {
      alloc it: int32[6, 1] sbuf;
      alloc rows: float32[6, 4] sbuf;
      load(dst=it[...], src=idx[...]);
      load(dst=rows[...], src=table[indirect(it[...]), ds(0, 4)]);
      store(dst=g[...], src=rows[...]);
      store(dst=h[indirect(it[...]), ds(0, 4)], src=rows[...], accumulate=add);
    }""")
    table = f32(10, 4)
    idx = np.array([[3], [1], [3], [0], [9], [3]], np.int32)
    h = np.zeros((10, 4), np.float32)
    out = evaluate_tiles(k, {"table": table, "idx": idx, "h": h})
    np.testing.assert_array_equal(out["g"], table[idx[:, 0]])
    ref = np.zeros((10, 4), np.float32)
    np.add.at(ref, idx[:, 0], table[idx[:, 0]])
    np.testing.assert_allclose(out["h"], ref, rtol=1e-6)


def test_reading_unwritten_tile_memory_shows_as_nan_and_bad_views_are_diagnostics():
    k = parse("""
    kernel u(y: out float32[128, 4]) {
      alloc t: float32[128, 4] sbuf;
      store(dst=y[...], src=t[...]);
    }""")
    assert np.isnan(evaluate_tiles(k, {})["y"]).all()
    bad = parse("""
    kernel b(x: in float32[100, 4], y: out float32[100, 4]) {
      alloc t: float32[128, 4] sbuf;
      load(dst=t[ds(0, 128), ds(0, 4)], src=x[ds(0, 128), ds(0, 4)]);
      store(dst=y[...], src=t[ds(0, 100), ds(0, 4)]);
    }""")
    with pytest.raises(DiagnosticError) as exc:
        evaluate_tiles(bad, {"x": f32(100, 4)})
    assert exc.value.diagnostic.code == "C2N2438"


def test_loads_of_an_inout_read_its_entry_value() -> None:
    """As in the generated port (stores go to a separate output), a load after a store to an
    inout tensor sees the kernel-entry value."""
    from cuda2nki.ir.nodes import Alloc, Kernel, Load, Slice, Store, TensorDecl, View

    tile = View("t", (Slice(0, 1), Slice(0, 4)))
    hbm = View("y", (Slice(0, 4),))
    k = Kernel(
        "k",
        params=(TensorDecl("x", (4,), "float32"), TensorDecl("y", (4,), "float32", "inout")),
        body=(
            Alloc("t", (1, 4), "float32"),
            Load(tile, View("x", (Slice(0, 4),))),
            Store(hbm, tile),
            Alloc("u", (1, 4), "float32"),
            Load(View("u", tile.dims), hbm),
            Store(View("y", (Slice(0, 4),)), View("u", tile.dims)),
        ),
    )
    y = np.arange(4, dtype=np.float32)
    out = evaluate_tiles(k, {"x": np.ones(4, np.float32), "y": y}, {})
    np.testing.assert_array_equal(out["y"], y)


def test_exact_integer_instructions_wrap_and_truncate_as_c() -> None:
    """int_arith: C's 32-bit semantics on the values (wraparound, truncating division, a signed
    arithmetic shift); bitwise engine ops on integer tiles work on the bit patterns."""
    k = parse("""
    kernel ints(a: in int32[4, 8], b: in uint32[4, 8], m: out int32[4, 8], d: out int32[4, 8],
                s: out int32[4, 8], u: out uint32[4, 8], c: out float32[4, 8],
                x: out uint32[4, 8]) {
      alloc ta: int32[4, 8] sbuf;
      alloc tb: uint32[4, 8] sbuf;
      alloc tm: int32[4, 8] sbuf;
      alloc td: int32[4, 8] sbuf;
      alloc ts: int32[4, 8] sbuf;
      alloc tu: uint32[4, 8] sbuf;
      alloc tc: float32[4, 8] sbuf;
      alloc tx: uint32[4, 8] sbuf;
      load(dst=ta[...], src=a[...]);
      load(dst=tb[...], src=b[...]);
      int_arith(dst=tm[...], op=mul, a=ta[...], b=-1640531527);
      int_arith(dst=td[...], op=div, a=ta[...], b=-7);
      int_arith(dst=ts[...], op=shr, a=ta[...], b=3);
      int_arith(dst=tu[...], op=mod, a=tb[...], b=1000003, unsigned=true);
      int_arith(dst=tc[...], op=lt, a=tb[...], b=tu[...], unsigned=true);
      tensor_tensor(dst=tx[...], op=bitxor, a=tb[...], b=tu[...]);
      store(dst=m[...], src=tm[...]);
      store(dst=d[...], src=td[...]);
      store(dst=s[...], src=ts[...]);
      store(dst=u[...], src=tu[...]);
      store(dst=c[...], src=tc[...]);
      store(dst=x[...], src=tx[...]);
    }""")
    assert verify(k) == []
    rng = np.random.default_rng(5)
    a = rng.integers(-(2**31), 2**31, (4, 8)).astype(np.int32)
    b = rng.integers(0, 2**32, (4, 8)).astype(np.uint32)
    out = evaluate_tiles(k, {"a": a, "b": b})
    a64 = a.astype(np.int64)
    np.testing.assert_array_equal(out["m"], (a64 * -1640531527).astype(np.int32))
    np.testing.assert_array_equal(out["d"], np.trunc(a64 / -7).astype(np.int32))
    np.testing.assert_array_equal(out["s"], a >> 3)
    np.testing.assert_array_equal(out["u"], b % np.uint32(1000003))
    np.testing.assert_array_equal(out["c"], (b < b % np.uint32(1000003)).astype(np.float32))
    np.testing.assert_array_equal(out["x"], b ^ (b % np.uint32(1000003)))


def test_int_arith_verifier_findings() -> None:
    k = parse("""
    kernel bad(a: in int32[4, 8], f: out float32[4, 8]) {
      alloc ta: int32[4, 8] sbuf;
      alloc tf: float32[4, 8] sbuf;
      load(dst=ta[...], src=a[...]);
      int_arith(dst=tf[...], op=exp, a=ta[...], b=1);
      int_arith(dst=tf[...], op=add, a=ta[...], b=1);
      int_arith(dst=ta[...], op=add, a=1, b=2);
      store(dst=f[...], src=tf[...]);
    }""")
    codes = [d.code for d in verify(k)]
    assert codes.count("C2N2444") == 4  # the op, two destinations, no tile operand
