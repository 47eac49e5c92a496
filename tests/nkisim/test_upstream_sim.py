"""Python that the legacy NKI simulator runs as Python runs it (docs/simulator-rulings.md):
``and`` / ``or`` on masks, and an SBUF tile returned to the public simulator's caller."""

from __future__ import annotations

import textwrap

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError, Severity
from cuda2nki.nkisim import load_kernel, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"
LEG = (
    "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\n"
    "import neuronxcc.nki.isa as nisa\nimport numpy as np\n"
)

RNG = np.random.default_rng(11)


def kern(tmp_path, header: str, body: str):
    p = tmp_path / "port.py"
    p.write_text(header + textwrap.dedent(body))
    return load_kernel(p)


# --------------------------------------------------------------------------- and / or on masks

GRIDS = {
    "arange": "i_p = nl.arange(P)[:, None]; i_f = nl.arange(F)[None, :]",
    "mgrid": "i_p, i_f = nl.mgrid[0:P, 0:F]",
}


def _mask_kernel(tmp_path, grid: str, mask: str, shape: tuple[int, int]):
    p, f = shape
    body = f"""
    @nki.jit
    def k(a):
        P, F = {p}, {f}
        out = nl.ndarray((P, F), a.dtype, buffer=nl.shared_hbm)
        {GRIDS[grid]}
        nl.store(out[i_p, i_f], value=nl.zeros((P, F), a.dtype))
        t = nl.load(a[i_p, i_f])
        nl.store(out[i_p, i_f], value=nl.square(t), mask={mask})
        return out
    """
    return kern(tmp_path, LEG, body)


@pytest.mark.parametrize("grid", sorted(GRIDS))
@pytest.mark.parametrize("shape", [(128, 512), (64, 96)])
@pytest.mark.parametrize(
    "mask, rows_kept, cols_kept",
    [
        ("(i_p < P // 2 and i_f < F // 2)", False, True),  # 'and': the right-hand mask
        ("(i_f < F // 2 and i_p < P // 2)", True, False),
        ("(i_p < P // 2 or i_f < F // 2)", True, False),  # 'or': the left-hand mask
        ("((i_p < P // 2) & (i_f < F // 2))", True, True),  # '&': both
    ],
)
def test_and_or_keep_one_mask_as_python_does(tmp_path, grid, shape, mask, rows_kept, cols_kept):
    k = _mask_kernel(tmp_path, grid, mask, shape)
    a = RNG.standard_normal(shape).astype(np.float32)
    res = simulate_kernel(k, [a])
    p, f = shape
    sel = np.ones(shape, bool)
    if rows_kept:
        sel[p // 2 :, :] = False
    if cols_kept:
        sel[:, f // 2 :] = False
    np.testing.assert_array_equal(res.outputs, np.where(sel, a * a, 0))
    warned = [w for w in res.warnings if w.code == "C2N3021"]
    if "&" in mask:
        assert not warned
    else:
        assert warned and all(w.severity is Severity.WARNING for w in warned)
        assert warned[0].loc.line == 13 and "'&' / '|'" in warned[0].message


def test_if_on_a_mask_takes_the_branch_and_warns(tmp_path):
    k = kern(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((4, 8), a.dtype, buffer=nl.shared_hbm)
            i_p = nl.arange(4)[:, None]
            t = nl.load(a)
            if i_p < 2:
                t = nl.add(t, 1.0)
            nl.store(out, value=t)
            return out
    """,
    )
    a = RNG.standard_normal((4, 8)).astype(np.float32)
    res = simulate_kernel(k, [a])
    np.testing.assert_allclose(res.outputs, a + 1.0)
    assert [w.loc.line for w in res.warnings if w.code == "C2N3021"] == [11]


# --------------------------------------------------------------------------- on-chip returns

_RETURNS_SBUF = """
@nki.jit{mode}
def k(a):
    t = nl.load(a)
    r = nl.ndarray(a.shape, dtype={dtype}, buffer=nl.sbuf)  # line 9
    r[...] = nl.multiply(t, 2.0, dtype={dtype})
    return {ret}
"""


@pytest.mark.parametrize("mode", ["", '(mode="simulation")'])
@pytest.mark.parametrize("dtype", ["nl.float32", "nl.bfloat16"])
@pytest.mark.parametrize("ret", ["r", "(r, r)"])
def test_legacy_public_run_returns_an_sbuf_tile(tmp_path, mode, dtype, ret):
    k = kern(tmp_path, LEG, _RETURNS_SBUF.format(mode=mode, dtype=dtype, ret=ret))
    a = RNG.standard_normal((16, 32)).astype(np.float32)
    out = k(a)  # the public simulator's Python API
    got = out if ret == "r" else out[0]
    want = (a * 2.0).astype(got.dtype)
    np.testing.assert_array_equal(np.asarray(got, np.float32), want.astype(np.float32))


@pytest.mark.parametrize("dtype", ["nl.float32", "nl.bfloat16"])
def test_port_check_keeps_an_sbuf_return_an_error(tmp_path, dtype):
    k = kern(tmp_path, LEG, _RETURNS_SBUF.format(mode="", dtype=dtype, ret="r"))
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.ones((16, 32), np.float32)])
    d = ei.value.diagnostic
    assert d.code == "C2N3011" and d.loc.line == 9 and d.severity is Severity.ERROR, d


def test_current_api_public_run_keeps_an_sbuf_return_an_error(tmp_path):
    k = kern(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            r = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=r, src=a)
            return r
    """,
    )
    with pytest.raises(DiagnosticError) as ei:
        k(np.ones((16, 32), np.float32))
    assert ei.value.diagnostic.code == "C2N3011" and ei.value.diagnostic.loc.line == 7


# --------------------------------------------------------------------------- tensor_scalar operands


@pytest.mark.parametrize("which", ["operand0", "operand1"])
@pytest.mark.parametrize("shape", [(128, 512), (64, 8)])
def test_a_full_tile_tensor_scalar_operand_stays_a_violation(tmp_path, which, shape):
    """The 2024 documentation (SDK, general/nki/api) allows a scalar or a (P, 1) tile only; the
    2024 backward attention of the samples passed a full tile, and was changed later: the port
    check refuses it."""
    k = _full_tile_kernel(tmp_path, which)
    a = np.ones(shape, np.float32)
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [a, a])
    d = ei.value.diagnostic
    assert d.code == "C2N3014" and d.loc.line == 11 and f"{which} must be a scalar" in d.message


@pytest.mark.parametrize("which", ["operand0", "operand1"])
@pytest.mark.parametrize("shape", [(128, 512), (64, 8)])
def test_the_public_api_applies_a_full_tile_operand_elementwise(tmp_path, which, shape):
    """Run as the public simulator's Python API runs a legacy kernel, a full-tile operand is
    applied elementwise, as the legacy simulator did (a C2N3014 warning)."""
    from cuda2nki.nkisim.kernel import run

    k = _full_tile_kernel(tmp_path, which)
    a = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal(shape).astype(np.float32)
    col = b[:, 0:1]
    want = (a - b) * 2.0 if which == "operand0" else (a - col) * b
    np.testing.assert_allclose(np.asarray(k(a, b)), want, rtol=1e-6, atol=1e-6)
    res = run(k, [a, b], {}, public=True)
    codes = [(w.code, w.severity, w.loc.line) for w in res.warnings]
    assert ("C2N3014", Severity.WARNING, 11) in codes, codes


def test_a_full_tile_operand_of_another_shape_stays_a_violation(tmp_path):
    k = _full_tile_kernel(tmp_path, "operand1", other="y[:, 0:4]")
    a = np.ones((16, 8), np.float32)
    with pytest.raises(DiagnosticError) as ei:
        k(a, a)
    assert ei.value.diagnostic.code == "C2N3014"


def _full_tile_kernel(tmp_path, which: str, other: str = "y"):
    ops = {"operand0": "y[:, 0:1]", "operand1": "2.0"} | {which: other}
    return kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(a, b):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            x = nl.load(a)
            y = nl.load(b)
            r = nisa.tensor_scalar(data=x, op0=np.subtract, operand0={ops["operand0"]},
                                   op1=np.multiply, operand1={ops["operand1"]})
            nl.store(out, value=r)
            return out
    """,
    )


# --------------------------------------------------------------------------- legacy storage rulings


@pytest.mark.parametrize("mode", ["", '(mode="simulation")'])
@pytest.mark.parametrize(
    "op, ref",
    [
        ("nl.exp", lambda x: np.exp(x)),
        ("np.square", lambda x: np.square(x)),
    ],
)
def test_legacy_bf16_result_tile_rounds_before_an_fp32_store(tmp_path, mode, op, ref):
    """A narrow-typed result tile holds its type's values, not the legacy simulator's fp32
    precision ("Legacy simulator behaviour the simulator does not copy")."""
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit{mode}
        def k(src):
            dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
            x = nl.load(src)
            y = nisa.activation(op={op}, data=x, dtype=nl.bfloat16)
            nl.store(dst, y)
            return dst
    """,
    )
    a = (RNG.random((32, 48)) * 3 + 0.1).astype(np.float32)
    got = k(a)  # the public simulator's Python API
    exact = ref(a).astype(np.float32)
    rounded = exact.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_allclose(got, rounded, rtol=2e-2)
    assert got.dtype == np.float32 and not np.allclose(got, exact, rtol=1e-5, atol=0)
    assert np.array_equal(got, got.astype(ml_dtypes.bfloat16).astype(np.float32))


@pytest.mark.parametrize("grid", sorted(GRIDS))
@pytest.mark.parametrize("shape, part", [((128, 512), (64, 256)), ((32, 40), (8, 40))])
def test_legacy_never_written_tile_elements_reach_an_output_as_nan(tmp_path, grid, shape, part):
    """A masked op writes part of a tile; storing the whole tile into an output argument
    carries the never-written canary (NaN) there, as the public simulator's sentinel does."""
    p, f = shape
    mp, mf = part
    k = kern(
        tmp_path,
        LEG,
        f"""
        @nki.jit
        def k(src, dst):
            P, F = {p}, {f}
            {GRIDS[grid]}
            t = nl.load(src[i_p, i_f])
            sq = nl.square(t, mask=((i_p < {mp}) & (i_f < {mf})))
            nl.store(dst[i_p, i_f], sq[i_p, i_f])
    """,
    )
    a = RNG.standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, np.float32)
    k(a, out)  # the output argument is updated in place
    inside = np.zeros(shape, bool)
    inside[:mp, :mf] = True
    np.testing.assert_allclose(out[inside], np.square(a)[inside], rtol=1e-6)
    assert np.isnan(out[~inside]).all()
