"""Names of the late legacy ``neuronxcc.nki`` API that the public NKI tests use: multi-core
launch grids, the HBM identity constant, the in-place ``dst=`` form of some instructions,
strided fp8 views, and kernels named like tests."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"
RNG = np.random.default_rng(19)


def kern(tmp_path, body: str, name: str | None = None):
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(body))
    return load_kernel(p, name)


def raises(k, inputs, code: str, line: int):
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, inputs)
    d = ei.value.diagnostic
    assert d.code == code and d.loc.line == line, d
    return d


# --------------------------------------------------------------------------- nl.nc / spmd_dim

GRID_KERNEL = """
@nki.jit
def stamp(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    j = nl.program_id(1)
    t = nl.load(a[i, j])
    nl.store(out[i, j], t + (i * 10 + j) + 1000 * nl.num_programs(0))
    return out
"""


@pytest.mark.parametrize(
    "dim",
    [
        "nl.spmd_dim(nl.nc(2), 3)",
        "nl.spmd_dim(3, nl.nc(2))",
        "nl.nc(2) * 3",
        "3 * nl.nc(2)",
        "nl.spmd_dim(6, nl.nc(1))",
        "6",
    ],
)
def test_core_spread_grid_runs_every_program_once(tmp_path, dim):
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(GRID_KERNEL))
    k = load_kernel(p, "stamp")
    a = RNG.standard_normal((6, 2, 1, 4)).astype(np.float32)
    grid = eval(dim, {"nl": nl})  # the host side of the launch, as a public test writes it
    out = k[grid, 2](a)
    ids = np.arange(6)[:, None] * 10 + np.arange(2)[None, :] + 6000
    np.testing.assert_allclose(out, a + ids[:, :, None, None], rtol=1e-6)


@pytest.mark.parametrize(
    "expr", ["nl.nc(3)", "nl.nc(0)", "nl.spmd_dim(nl.nc(2), nl.nc(2))", "nl.spmd_dim(4)"]
)
def test_core_grid_limits_are_reported_at_their_line(tmp_path, expr):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            d = {expr}
            nl.store(out, nl.load(a))
            return out
        """,
    )
    raises(k, [np.zeros((4, 4), np.float32)], "C2N3021", 8)


# --------------------------------------------------------------------------- identity constant


@pytest.mark.parametrize("n,dtype", [(128, "nl.bfloat16"), (64, "nl.float32"), (32, "nl.uint8")])
def test_legacy_identity_is_a_shared_hbm_constant_loaded_by_the_kernel(tmp_path, n, dtype):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            ident = nl.shared_identity_matrix(n={n}, dtype={dtype})
            assert ident.buffer is nl.shared_hbm
            eye = nl.load(ident, dtype=a.dtype)
            t = nl.load(a)
            nl.store(out, nl.copy(nisa.nc_matmul(t, eye)))
            return out
        """,
    )
    a = RNG.integers(-4, 4, (n, n)).astype(np.float32)
    np.testing.assert_array_equal(simulate_kernel(k, [a]).outputs, a.T)


def test_legacy_identity_is_not_an_sbuf_operand(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            ident = nl.shared_identity_matrix(n=32, dtype=nl.float32)
            t = nl.load(a)
            nl.store(out, nl.copy(nisa.nc_matmul(t, ident)))
            return out
        """,
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.zeros((32, 32), np.float32)])
    assert ei.value.diagnostic.loc.line == 10


# --------------------------------------------------------------------------- dst= forms


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", [(128, 64), (32, 5)])
def test_legacy_select_reduce_into_dst(tmp_path, reverse, shape):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(pred, x, y):
            out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            red = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
            into = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
            r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
            got = nisa.select_reduce(
                predicate=nl.load(pred), on_true=nl.load(x), on_false=nl.load(y), dst=into,
                reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=r, reduce_op=nl.max,
                reverse_pred={reverse},
            )
            assert got is None
            nl.store(out, into)
            nl.store(red, r)
            return out, red
        """,
    )
    pred = RNG.integers(0, 2, shape).astype(np.uint8)
    x, y = (RNG.standard_normal(shape).astype(np.float32) for _ in range(2))
    want = np.where((pred != 0) != reverse, x, y)
    out, red = simulate_kernel(k, [pred, x, y]).outputs
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(red[:, 0], want.max(axis=1))


@pytest.mark.parametrize("op1,scan", [("nl.add", np.cumsum), ("nl.maximum", np.maximum.accumulate)])
def test_legacy_tensor_scalar_cumulative_into_dst(tmp_path, op1, scan):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            acc = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_scalar_cumulative(
                src=nl.load(a), dst=acc, op0=nl.multiply, op1={op1}, imm0=2.0
            )
            nl.store(out, acc)
            return out
        """,
    )
    a = RNG.standard_normal((16, 24)).astype(np.float32)
    np.testing.assert_allclose(simulate_kernel(k, [a]).outputs, scan(a * 2, axis=1), rtol=1e-5)


def test_legacy_dst_form_keeps_the_dtype_rule(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            acc = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_scalar_cumulative(
                src=nl.load(a), dst=acc, op0=nl.multiply, op1=nl.add, imm0=2.0, dtype=nl.bfloat16
            )
            nl.store(out, acc)
            return out
        """,
    )
    raises(k, [np.zeros((4, 8), np.float32)], "C2N3021", 9)


# --------------------------------------------------------------------------- fp8 views


@pytest.mark.parametrize("fp8", ["float8_e5m2", "float8_e4m3"])
def test_fp8_tile_through_an_mgrid_view(tmp_path, fp8):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a, b):
            out = nl.ndarray((a.shape[2], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
            t = nl.ndarray((a.shape[0], 2, 16), dtype=nl.{fp8}, buffer=nl.sbuf)
            g = nl.mgrid[0:a.shape[0], 0:2, 0:a.shape[2]]
            t[g.p, g.x, g.y] = nl.load(a)
            u = nl.load(b, dtype=nl.{fp8})
            nl.store(out, nl.copy(nisa.nc_matmul(t[g.p, 0, g.y], u)))
            return out
        """,
    )
    import ml_dtypes

    npd = getattr(ml_dtypes, fp8)
    a = RNG.integers(-2, 3, (32, 2, 4)).astype(npd)
    b = RNG.integers(-2, 3, (32, 8)).astype(np.float32)
    want = a[:, 0, :].astype(np.float32).T @ b
    np.testing.assert_array_equal(simulate_kernel(k, [a, b]).outputs, want)


@pytest.mark.parametrize("fp8", ["float8_e5m2", "float8_e4m3", "float8_e4m3fn", "bfloat16"])
def test_a_narrow_host_dtype_is_known_when_it_is_the_first_one_met(fp8, monkeypatch):
    """ml_dtypes' float8_e5m2 reads as NumPy kind "f" (the others as "V"): a host array of it is
    an NKI float8_e5m2 input even when no other narrow type was looked up before."""
    import ml_dtypes

    from cuda2nki.nkisim import dtypes as dt

    fresh = {k: v for k, v in dt._BY_NP.items() if not isinstance(v.storage, str)}
    monkeypatch.setattr(dt, "_BY_NP", fresh)
    assert dt.as_dtype(np.dtype(getattr(ml_dtypes, fp8))) is dt.ALL[fp8]
    with pytest.raises(TypeError):
        dt.as_dtype(np.float64)


# --------------------------------------------------------------------------- test-named kernels


def test_a_kernel_named_like_a_test_is_not_collected_by_pytest(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit(mode="simulation")
        def test_copy(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, nl.load(a))
            return out
        """,
    )
    # pytest reads ``__test__`` before it unwraps a callable named ``test_*``
    assert k.__test__ is False
    a = RNG.standard_normal((8, 8)).astype(np.float32)
    np.testing.assert_array_equal(k(a), a)


# --------------------------------------------------------------------------- runtime offsets


@pytest.mark.parametrize(
    "index", ["offs[0, i] + iy", "iy + offs[0, i]", "offs[0, i] * 1 + iy", "offs[0, i] - iy"]
)
def test_legacy_tensor_copy_dynamic_src_reads_at_a_runtime_offset(tmp_path, index):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(src, offsets):
            out = nl.ndarray((64, offsets.shape[1]), dtype=src.dtype, buffer=nl.shared_hbm)
            t = nl.load(src)
            offs = nl.load(offsets)
            res = nl.ndarray((64, offsets.shape[1]), dtype=src.dtype, buffer=nl.sbuf)
            ix, iy = nl.mgrid[0:64, 0:1]
            for i in nl.affine_range(offsets.shape[1]):
                res[ix, i] = nisa.tensor_copy_dynamic_src(t[ix, {index}])
            nl.store(out, res)
            return out
        """,
    )
    src = RNG.standard_normal((64, 100)).astype(np.float32)
    offs = RNG.permutation(100)[None, :12].astype(np.int32)
    out = simulate_kernel(k, [src, offs]).outputs
    np.testing.assert_array_equal(out, src[:, offs[0]])


def test_legacy_tensor_copy_dynamic_dst_writes_at_a_runtime_offset(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(src, offsets):
            out = nl.ndarray((32, 50), dtype=src.dtype, buffer=nl.shared_hbm)
            t = nl.load(src)
            offs = nl.load(offsets)
            res = nl.zeros((32, 50), dtype=src.dtype, buffer=nl.sbuf)
            ix, iy = nl.mgrid[0:32, 0:1]
            for i in nl.affine_range(offsets.shape[1]):
                nisa.tensor_copy_dynamic_dst(dst=res[ix, offs[0, i] + iy], src=t[ix, i + iy])
            nl.store(out, res)
            return out
        """,
    )
    src = RNG.standard_normal((32, 7)).astype(np.float32)
    offs = RNG.permutation(50)[None, :7].astype(np.int32)
    want = np.zeros((32, 50), np.float32)
    want[:, offs[0]] = src
    np.testing.assert_array_equal(simulate_kernel(k, [src, offs]).outputs, want)


@pytest.mark.parametrize(
    "load,code",
    [("nl.load(offsets, dtype=nl.float32)", "C2N3021"), ("nl.load(offsets)", "C2N3001")],
)
def test_runtime_offset_must_be_one_integer(tmp_path, load, code):
    """A float tile is no offset; a tile of several offsets in an expression is refused."""
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(src, offsets):
            out = nl.ndarray((8, 1), dtype=src.dtype, buffer=nl.shared_hbm)
            t = nl.load(src)
            offs = {load}
            ix, iy = nl.mgrid[0:8, 0:1]
            nl.store(out, nisa.tensor_copy_dynamic_src(t[ix, offs[0, 0:2] + iy] if "{code}" == "C2N3001" else t[ix, offs[0, 0] + iy]))
            return out
        """,
    )
    raises(k, [np.zeros((8, 16), np.float32), np.zeros((1, 4), np.int32)], code, 11)


# --------------------------------------------------------------------------- nl.loop_reduce


@pytest.mark.parametrize(
    "op,ref", [("nl.add", np.add), ("nl.maximum", np.maximum), ("nl.subtract", np.subtract)]
)
@pytest.mark.parametrize("form", ["subscript", "name"])
def test_legacy_loop_reduce_folds_into_its_destination(tmp_path, op, ref, form):
    store = (
        "acc[j, :, :] = nl.loop_reduce(x, op={op}, loop_indices=(i,), dtype=nl.float32)"
        if form == "subscript"
        else "b = nl.loop_reduce(x, op={op}, loop_indices=[i], dtype=nl.float32)"
    ).format(op=op)
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray((2, 16, 24), dtype=nl.float32, buffer=nl.shared_hbm)
            acc = nl.full((2, nl.par_dim(16), 24), 1.5, dtype=nl.float32)
            for j in nl.affine_range(2):
                b = nl.full((16, 24), 1.5, dtype=nl.float32)
                for i in nl.affine_range(3):
                    x = nl.load(a[j, i])
                    {store}
                nl.store(out[j], value={"acc[j, :, :]" if form == "subscript" else "b"})
            return out
        """,
    )
    a = RNG.standard_normal((2, 3, 16, 24)).astype(np.float32)
    want = np.full((2, 16, 24), 1.5, np.float32)
    for i in range(3):
        want = ref(a[:, i], want)  # the destination is op's right-hand input
    np.testing.assert_allclose(simulate_kernel(k, [a]).outputs, want, rtol=1e-6)


def test_loop_reduce_needs_a_destination(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            x = nl.load(a)
            for i in nl.affine_range(2):
                nl.store(out, value=nl.loop_reduce(x, op=nl.add, loop_indices=[i]))
            return out
        """,
    )
    raises(k, [np.zeros((4, 8), np.float32)], "C2N3001", 10)


# --------------------------------------------------------------------------- stream shuffle


@pytest.mark.parametrize("src_p,dst_p", [(1, 32), (1, 8), (4, 64), (32, 32)])
def test_stream_shuffle_broadcasts_fewer_source_partitions(tmp_path, src_p, dst_p):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray(({dst_p}, a.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
            t = nl.load(a)
            b = nl.ndarray(({dst_p}, a.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
            nisa.nc_stream_shuffle(src=t, dst=b, shuffle_mask=[i % {src_p} for i in range(32)])
            nl.store(out, value=b)
            return out
        """,
    )
    a = RNG.standard_normal((src_p, 24)).astype(np.float32)
    rows = [q0 + i % src_p for q0 in range(0, dst_p, 32) for i in range(min(32, dst_p - q0))]
    if src_p < 32 and dst_p > 32:
        rows = None  # the second quadrant would read source partitions that do not exist
    if rows is None:
        raises(k, [a], "C2N3019", 10)
    else:
        np.testing.assert_array_equal(simulate_kernel(k, [a]).outputs, a[rows])


def test_stream_shuffle_keeps_the_free_size_rule(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((32, 16), dtype=nl.float32, buffer=nl.shared_hbm)
            b = nl.ndarray((32, 16), dtype=nl.float32, buffer=nl.sbuf)
            nisa.nc_stream_shuffle(src=nl.load(a), dst=b, shuffle_mask=[0] * 32)
            nl.store(out, value=b)
            return out
        """,
    )
    raises(k, [np.zeros((1, 24), np.float32)], "C2N3014", 9)


# --------------------------------------------------------------------------- matmul tiling mode


@pytest.mark.parametrize(
    "size,pos", [((64, 64), (64, 0)), ((32, 32), (96, 32)), ((128, 128), (0, 0))]
)
@pytest.mark.parametrize(
    "header",
    [LEG, LEG.replace("from neuronxcc import nki", "import nki").replace("neuronxcc.", "")],
)
def test_matmul_tiling_mode_computes_a_plain_matmul(tmp_path, size, pos, header):
    k_, m = size
    call = (
        f"nisa.nc_matmul(x, y, tile_position={pos}, tile_size={size})"
        if header is LEG
        else f"nisa.nc_matmul(ps, x, y, tile_position={pos}, tile_size={size})"
    )
    p = tmp_path / "port.py"
    p.write_text(
        header
        + textwrap.dedent(
            f"""
        @nki.jit
        def k(a, b):
            out = nl.ndarray(({m}, b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
            x = nl.load(a)
            y = nl.load(b)
            ps = nl.ndarray(({m}, b.shape[1]), dtype=nl.float32, buffer=nl.psum)
            r = {call}
            nl.store(out, value=nl.copy(r if r is not None else ps))
            return out
        """
        )
    )
    kk = load_kernel(p, "k")
    a = RNG.standard_normal((k_, m)).astype(np.float32)
    b = RNG.standard_normal((k_, 96)).astype(np.float32)
    np.testing.assert_allclose(simulate_kernel(kk, [a, b]).outputs, a.T @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "size,pos,shape",
    [((64, 64), (32, 0), (64, 64)), ((48, 64), (0, 0), (48, 64)), ((64, 64), (0, 0), (64, 128))],
)
def test_matmul_tiling_mode_placement_is_checked(tmp_path, size, pos, shape):
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a, b):
            out = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
            r = nisa.nc_matmul(nl.load(a), nl.load(b), tile_position={pos}, tile_size={size})
            nl.store(out, value=nl.copy(r))
            return out
        """,
    )
    a = np.zeros(shape, np.float32)
    raises(k, [a, np.zeros((shape[0], 32), np.float32)], "C2N3021", 8)
