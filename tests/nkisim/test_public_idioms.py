"""Constructs of the public NKI kernels that the simulator must accept (with the documented
semantics), next to the variants that stay constraint violations."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"
LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"


def kern(tmp_path, header: str, body: str, name: str | None = None):
    p = tmp_path / "port.py"
    p.write_text(header + textwrap.dedent(body))
    return load_kernel(p, name)


def raises(k, inputs, code: str, line: int):
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, inputs)
    d = ei.value.diagnostic
    assert d.code == code and d.loc.line == line, d
    return d


RNG = np.random.default_rng(7)


# --------------------------------------------------------------------------- reshape(shape=)


@pytest.mark.parametrize("spelling", ["shape=(8, 64)", "(8, 64)", "8, 64", "[8, 64]"])
def test_reshape_spellings(tmp_path, spelling):
    k = kern(
        tmp_path,
        CUR,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray((8, 64), a.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=a.reshape({spelling}))
            return out
    """,
    )
    a = RNG.standard_normal((4, 128)).astype(np.float32)
    np.testing.assert_array_equal(simulate_kernel(k, [a]).outputs, a.reshape(8, 64))


def test_reshape_shape_keyword_keeps_the_element_count_check(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            b = a.reshape(shape=(8, 63))
            return a
    """,
    )
    raises(k, [np.zeros((4, 128), np.float32)], "C2N3021", 7)


# --------------------------------------------------------------------------- if tensor


@pytest.mark.parametrize("header", [CUR, LEG])
@pytest.mark.parametrize("with_bias", [True, False])
def test_if_on_an_optional_hbm_argument(tmp_path, header, with_bias):
    if header is CUR:
        body = """
        @nki.jit
        def k(a, bias=None):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a)
            if bias:
                b = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b, src=bias)
                nisa.tensor_tensor(dst=t, data1=t, data2=b, op=nl.add)
            nisa.dma_copy(dst=out, src=t)
            return out
        """
    else:
        body = """
        @nki.jit
        def k(a, bias=None):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            t = nl.load(a)
            if bias:
                t = nl.add(t, nl.load(bias))
            nl.store(out, value=t)
            return out
        """
    k = kern(tmp_path, header, body)
    a = RNG.standard_normal((16, 32)).astype(np.float32)
    b = RNG.standard_normal((16, 32)).astype(np.float32)
    got = simulate_kernel(k, [a, b] if with_bias else [a]).outputs
    np.testing.assert_allclose(got, a + b if with_bias else a, rtol=1e-6)


@pytest.mark.parametrize("header", [CUR, LEG])
def test_if_on_an_on_chip_tile_is_still_refused(tmp_path, header):
    load = "nisa.dma_copy(dst=t, src=a)" if header is CUR else "t[...] = nl.load(a)"
    k = kern(
        tmp_path,
        header,
        f"""
        @nki.jit
        def k(a):
            t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
            {load}
            if t:
                pass
            return a
    """,
    )
    raises(k, [np.ones((4, 4), np.float32)], "C2N3021", 9)


# --------------------------------------------------------------------------- 1-D legacy tiles


@pytest.mark.parametrize("col", [0, 3])
def test_legacy_partition_only_tile_from_one_column(tmp_path, col):
    """``nl.load(a[0:P, j])`` is a tile with one element per partition (a ``(P,)`` tile)."""
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(x, a):
            out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
            s = nl.load(a[0:x.shape[0], {col}])
            y = nisa.activation(op=nl.exp, data=nl.load(x), scale=s)
            nl.store(out, value=y)
            return out
    """,
    )
    x = RNG.standard_normal((64, 16)).astype(np.float32)
    a = RNG.standard_normal((64, 4)).astype(np.float32)
    got = simulate_kernel(k, [x, a]).outputs
    np.testing.assert_allclose(got, np.exp(x * a[:, col : col + 1]), rtol=1e-5)


def test_current_api_partition_only_tile_is_still_rejected(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((64,), nl.float32, buffer=nl.sbuf)
            return a
    """,
    )
    raises(k, [np.ones((4, 4), np.float32)], "C2N3003", 7)


def test_legacy_tile_needs_a_partition_dimension(tmp_path):
    k = kern(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((), nl.float32, buffer=nl.sbuf)
            return a
    """,
    )
    raises(k, [np.ones((4, 4), np.float32)], "C2N3003", 7)


# --------------------------------------------------------------------------- tensor_tensor


@pytest.mark.parametrize("order", ["tile, col", "col, tile"])
@pytest.mark.parametrize("shape", [(128, 512), (64, 4, 8)])
def test_legacy_tensor_tensor_broadcasts_one_element_per_partition(tmp_path, order, shape):
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(x, c):
            out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
            tile = nl.load(x)
            col = nl.load(c)
            nl.store(out, value=nisa.tensor_tensor({order}, nl.subtract))
            return out
    """,
    )
    x = RNG.standard_normal(shape).astype(np.float32)
    c = RNG.standard_normal((shape[0], 1)).astype(np.float32)
    cb = c.reshape((shape[0],) + (1,) * (len(shape) - 1))
    want = x - cb if order == "tile, col" else cb - x
    np.testing.assert_allclose(simulate_kernel(k, [x, c]).outputs, want, rtol=1e-6)


def test_legacy_tensor_tensor_other_size_mismatch_is_rejected(tmp_path):
    k = kern(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(x, c):
            out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
            y = nisa.tensor_tensor(nl.load(x), nl.load(c), nl.add)
            nl.store(out, value=y)
            return out
    """,
    )
    raises(k, [np.ones((128, 8), np.float32), np.ones((128, 2), np.float32)], "C2N3014", 8)


def test_current_tensor_tensor_size_one_operand_is_rejected(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            x = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            c = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
            nisa.memset(x, 1.0)
            nisa.memset(c, 2.0)
            nisa.tensor_tensor(dst=x, data1=x, data2=c, op=nl.add)
            return a
    """,
    )
    raises(k, [np.ones((4, 4), np.float32)], "C2N3014", 11)


# --------------------------------------------------------------------------- PSUM matmul operands


@pytest.mark.parametrize("which", ["stationary", "moving", "both"])
def test_legacy_matmul_reads_a_psum_operand_through_sbuf(tmp_path, which):
    """A TensorE transpose result (PSUM) fed straight to ``nc_matmul``: the legacy compiler
    moves it to SBUF first, and the simulator records that copy."""
    s = "nisa.nc_transpose(nl.load(x))" if which in ("stationary", "both") else "nl.load(xt)"
    m = "nisa.nc_transpose(nl.load(y))" if which in ("moving", "both") else "nl.load(yt)"
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(x, y, xt, yt):
            out = nl.ndarray((x.shape[0], y.shape[0]), nl.float32, buffer=nl.shared_hbm)
            r = nisa.nc_matmul({s}, {m})
            nl.store(out, value=nl.copy(r))
            return out
    """,
    )
    x = RNG.standard_normal((32, 64)).astype(np.float32)
    y = RNG.standard_normal((48, 64)).astype(np.float32)
    res = simulate_kernel(k, [x, y, x.T.copy(), y.T.copy()])
    np.testing.assert_allclose(res.outputs, x @ y.T, rtol=1e-4, atol=1e-4)
    copies = [i for i in res.trace if i.op == "tensor_copy"]  # and the nl.copy of the result
    assert len(copies) == (3 if which == "both" else 2)


def test_current_matmul_psum_operand_is_rejected(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
            m = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
            d = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
            nisa.memset(s, 1.0)
            nisa.memset(m, 1.0)
            nisa.nc_matmul(d, s, m)
            return a
    """,
    )
    raises(k, [np.ones((4, 4), np.float32)], "C2N3022", 12)


# --------------------------------------------------------------------------- in/out arguments


@pytest.mark.parametrize("outs", [1, 2])
def test_legacy_in_out_arguments_receive_the_results(tmp_path, outs):
    """A legacy kernel that returns nothing writes its results into arguments; the caller's
    arrays receive them (and are what ``simulate_kernel`` returns)."""
    second = "nl.store(d, value=nl.multiply(nl.load(a), 2.0))" if outs == 2 else ""
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(a, b, c, d):
            nl.store(c, value=nl.add(nl.load(a), nl.load(b)))
            {second}
    """,
    )
    a = RNG.standard_normal((8, 16)).astype(np.float32)
    b = RNG.standard_normal((8, 16)).astype(np.float32)
    c, d = np.zeros_like(a), np.zeros_like(a)
    a0 = a.copy()
    got = simulate_kernel(k, [a, b, c, d]).outputs
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    np.testing.assert_array_equal(a, a0)
    if outs == 2:
        np.testing.assert_allclose(d, 2 * a, rtol=1e-6)
        assert isinstance(got, tuple) and len(got) == 2
    else:
        assert not d.any()
        np.testing.assert_array_equal(got, c)


def test_legacy_simulate_kernel_writes_in_place(tmp_path):
    p = tmp_path / "port.py"
    p.write_text(
        LEG
        + textwrap.dedent("""
        import numpy as np

        @nki.jit
        def add(a, b, c):
            nl.store(c, value=nl.add(nl.load(a), nl.load(b)))

        def run():
            a = np.ones((4, 8), np.float32)
            c = np.zeros((4, 8), np.float32)
            nki.simulate_kernel(add, a, a, c)
            return c
    """)
    )
    from cuda2nki.nkisim import load_module

    np.testing.assert_array_equal(load_module(p).run(), 2.0)


@pytest.mark.parametrize("tail", ["return a", "return b, a", "return (a)"])
def test_legacy_kernel_returning_values_keeps_inputs_immutable(tmp_path, tail):
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(a, b):
            def helper():
                return None
            nl.store(a, value=nl.load(b))
            {tail}
    """,
    )
    raises(k, [np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)], "C2N3012", 9)


# --------------------------------------------------------------------------- IndexError


OOB = {
    "slice past the free size": (CUR, "v = t[0:128, 0:600]"),
    "integer past the partitions": (CUR, "v = t[130, 0:8]"),
    "too many indices": (CUR, "v = t[0, 0, 0]"),
    "dma from outside the input": (CUR, "nisa.dma_copy(dst=t[0:128, 0:8], src=a[0:128, 60:68])"),
    "legacy load past the end": (LEG, "v = nl.load(a[0:128, 60:68])"),
    "legacy store past the end": (LEG, "nl.store(a[120:136, 0:8], value=t[0:16, 0:8])"),
}


@pytest.mark.parametrize("case", list(OOB))
def test_out_of_bounds_is_an_index_error_with_the_diagnostic(tmp_path, case):
    """The public tests expect ``IndexError`` for out-of-bounds accesses."""
    header, line = OOB[case]
    k = kern(
        tmp_path,
        header,
        f"""
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            {line}
            return a
    """,
    )
    with pytest.raises(IndexError) as ei:
        simulate_kernel(k, [np.ones((128, 64), np.float32)])
    assert isinstance(ei.value, DiagnosticError)
    d = ei.value.diagnostic
    assert d.code == "C2N3019" and d.loc.line == 8, d


def test_index_error_is_caught_by_a_port_like_the_public_simulator_raises_it(tmp_path):
    p = tmp_path / "port.py"
    p.write_text(
        CUR
        + textwrap.dedent("""
        import numpy as np

        @nki.jit
        def k(a):
            out = nl.ndarray((4, 4), a.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=a[0:4, 6:10])
            return out

        def probe():
            try:
                nki.simulate(k)(np.ones((4, 8), np.float32))
            except IndexError as exc:
                return exc
            return None
    """)
    )
    from cuda2nki.nkisim import load_module

    exc = load_module(p).probe()
    # exactly IndexError, as the public simulator raises it, carrying the diagnostic
    assert type(exc) is IndexError and exc.diagnostic.code == "C2N3019"
    assert isinstance(exc.__cause__, DiagnosticError)


def test_other_violations_are_not_index_errors(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((256, 4), nl.float32, buffer=nl.sbuf)
            return a
    """,
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.ones((4, 4), np.float32)])
    assert not isinstance(ei.value, IndexError)


# --------------------------------------------------------------------------- legacy names


@pytest.mark.parametrize(
    ("op0", "imm0", "op1", "scan"),
    [
        ("nl.multiply", 2.0, "nl.add", np.cumsum),
        ("nl.add", 1.0, "nl.maximum", np.maximum.accumulate),
        ("nl.subtract", 0.5, "nl.minimum", np.minimum.accumulate),
    ],
)
def test_legacy_tensor_scalar_cumulative(tmp_path, op0, imm0, op1, scan):
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(x):
            out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
            y = nisa.tensor_scalar_cumulative(nl.load(x), {op0}, {op1}, imm0={imm0})
            nl.store(out, value=y)
            return out
    """,
    )
    x = RNG.standard_normal((16, 32)).astype(np.float32)
    pre = {"nl.multiply": x * imm0, "nl.add": x + imm0, "nl.subtract": x - imm0}[op0]
    np.testing.assert_allclose(
        simulate_kernel(k, [x]).outputs, scan(pre, axis=1), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("scalar", [False, True])
def test_legacy_tensor_copy_predicated(tmp_path, reverse, scalar):
    src = "-1.0" if scalar else "nl.load(s)"
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(d, s, p):
            out = nl.ndarray(d.shape, d.dtype, buffer=nl.shared_hbm)
            t = nl.load(d)
            nisa.tensor_copy_predicated(src={src}, dst=t, predicate=nl.load(p),
                                        reverse_pred={reverse})
            nl.store(out, value=t)
            return out
    """,
    )
    d = RNG.standard_normal((8, 16)).astype(np.float32)
    s = RNG.standard_normal((8, 16)).astype(np.float32)
    p = (RNG.random((8, 16)) < 0.5).astype(np.uint8)
    take = (p == 0) if reverse else (p != 0)
    want = np.where(take, -1.0 if scalar else s, d)
    np.testing.assert_array_equal(simulate_kernel(k, [d, s, p]).outputs, want)


@pytest.mark.parametrize("dtype", [None, "nl.float32"])
def test_legacy_sequence_bounds(tmp_path, dtype):
    extra = f", dtype={dtype}" if dtype else ""
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(ids):
            out = nl.ndarray((1, 2, ids.shape[1]), {dtype or "ids.dtype"}, buffer=nl.shared_hbm)
            b = nisa.sequence_bounds(segment_ids=nl.load(ids){extra})
            nl.store(out, value=b)
            return out
    """,
    )
    ids = np.array([[1, 1, 2, 2, 2, 0, 3, 1, 1]], np.int32)
    got = simulate_kernel(k, [ids]).outputs
    n = ids.shape[1]
    starts = [0, 0, 2, 2, 2, n, 6, 7, 7]
    ends = [2, 2, 5, 5, 5, -1, 7, 9, 9]
    np.testing.assert_array_equal(got[0], np.array([starts, ends]))
    assert got.dtype == (np.float32 if dtype else np.int32)


@pytest.mark.parametrize("psum_side", ["x", "y"])
def test_legacy_nl_matmul_psum_operand(tmp_path, psum_side):
    """``nl.matmul`` on a PSUM tile (a previous matmul's result) reads it through SBUF."""
    x = "ab" if psum_side == "x" else "nl.load(c)"
    y = "nl.load(c)" if psum_side == "x" else "ab"
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(a, b, c):
            out = nl.ndarray((16, 16), nl.float32, buffer=nl.shared_hbm)
            ab = nl.matmul(nl.load(a), nl.load(b), transpose_x=True)
            r = nl.matmul({x}, {y}, transpose_x=True)
            nl.store(out, value=nl.copy(r))
            return out
    """,
    )
    a = RNG.standard_normal((32, 16)).astype(np.float32)
    b = RNG.standard_normal((32, 16)).astype(np.float32)
    c = RNG.standard_normal((16, 16)).astype(np.float32)
    ab = a.T @ b
    want = ab.T @ c if psum_side == "x" else c.T @ ab
    np.testing.assert_allclose(simulate_kernel(k, [a, b, c]).outputs, want, rtol=1e-4, atol=1e-4)


def test_current_nl_matmul_psum_operand_is_rejected(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
            m = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
            nisa.memset(s, 1.0)
            nisa.memset(m, 1.0)
            r = nl.matmul(s, m, transpose_x=True)
            return a
    """,
    )
    raises(k, [np.ones((4, 4), np.float32)], "C2N3022", 11)


@pytest.mark.parametrize(
    "ctor", ["nl.zeros({s}, dtype=nl.float32", "nl.full({s}, 0.0, dtype=nl.float32"]
)
@pytest.mark.parametrize("lazy", [True, False])
def test_legacy_lazy_initialization_keeps_the_values(tmp_path, ctor, lazy):
    """``lazy_initialization=True`` folds the fill into the first use: same values, no memset;
    a zero PSUM accumulator has none either way (its first matmul writes, reference 12.3)."""
    alloc = ctor.format(s="(nl.par_dim(16), 16)") + f", buffer=nl.psum, lazy_initialization={lazy})"
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(a, b):
            out = nl.ndarray((16, 16), nl.float32, buffer=nl.shared_hbm)
            acc = {alloc}
            for i in nl.affine_range(2):
                acc += nl.matmul(nl.load(a[i * 32:(i + 1) * 32, :]),
                                 nl.load(b[i * 32:(i + 1) * 32, :]), transpose_x=True)
            nl.store(out, value=nl.copy(acc))
            return out
    """,
    )
    a = RNG.standard_normal((64, 16)).astype(np.float32)
    b = RNG.standard_normal((64, 16)).astype(np.float32)
    res = simulate_kernel(k, [a, b])
    np.testing.assert_allclose(res.outputs, a.T @ b, rtol=1e-4, atol=1e-4)
    assert sum(i.op == "memset" for i in res.trace) == 0


# --------------------------------------------------------------------------- tensor == None


@pytest.mark.parametrize("header", [CUR, LEG], ids=["current", "legacy"])
@pytest.mark.parametrize(
    "test", ["bias != None", "not (bias == None)", "(bias != None) is True", "bias is not None"]
)
@pytest.mark.parametrize("with_bias", [True, False])
def test_optional_tensor_compared_with_none(tmp_path, header, test, with_bias):
    """``bias != None`` on a tensor argument is Python's test, not an element-wise compare."""
    if header is CUR:
        load = "nisa.dma_copy(dst=t, src=a)"
        add = (
            "b = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)\n"
            "        nisa.dma_copy(dst=b, src=bias)\n"
            "        nisa.tensor_tensor(dst=t, data1=t, data2=b, op=nl.add)"
        )
        store = "nisa.dma_copy(dst=out, src=t)"
    else:
        load, add = "t[...] = nl.load(a)", "t[...] = nl.add(t, nl.load(bias))"
        store = "nl.store(out, value=t)"
    k = kern(
        tmp_path,
        header,
        f"""

@nki.jit
def k(a, bias=None):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    {load}
    has_bias = {test}
    if has_bias:
        {add}
    {store}
    return out
""",
    )
    a = RNG.random((4, 8), dtype=np.float32)
    inputs = {"a": a, "bias": np.ones_like(a)} if with_bias else {"a": a}
    np.testing.assert_array_equal(simulate_kernel(k, inputs).outputs, a + 1 if with_bias else a)


def test_tensor_compared_with_a_number_is_still_element_wise(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=nl.uint8, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    m = nl.ndarray(a.shape, dtype=nl.uint8, buffer=nl.sbuf)
    m[...] = t != 0.0
    nisa.dma_copy(dst=out, src=m)
    return out
""",
    )
    a = np.array([[0, 1, 0, 2]], np.float32)
    np.testing.assert_array_equal(simulate_kernel(k, [a]).outputs, [[0, 1, 0, 1]])
