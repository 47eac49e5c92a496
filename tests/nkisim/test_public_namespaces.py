"""Namespaces and names that public NKI code imports: ``nki.compiler``, ``nki.isa.constants``,
``nki.dtype``, the MX ``*_x4`` dtypes, dtype limits (``nl.fp32.min``, ``nl.finfo``)."""

from __future__ import annotations

import textwrap

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, load_module, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"
LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"


def kern(tmp_path, text: str, name: str | None = None):
    p = tmp_path / "port.py"
    p.write_text(textwrap.dedent(text))
    return load_kernel(p, name)


@pytest.mark.parametrize(
    ("prefix", "imports"),
    [
        (CUR, "import nki.compiler as ncc"),
        (CUR, "from nki import compiler as ncc"),
        (LEG, "import neuronxcc.nki.compiler as ncc"),
        (LEG, "from neuronxcc.nki import compiler as ncc"),
        (LEG, "ncc = nki.compiler"),
    ],
)
@pytest.mark.parametrize(
    "decorators",
    [
        ["@ncc.skip_middle_end_transformations"],
        ["@ncc.enable_stack_allocator", "@ncc.skip_middle_end_transformations"],
        ["@ncc.enable_stack_allocator(log_level=20)", "@ncc.skip_middle_end_transformations()"],
        ["@ncc.force_auto_alloc"],
    ],
)
def test_compiler_decorators_leave_the_kernel_unchanged(tmp_path, prefix, imports, decorators):
    store = "nisa.dma_copy(dst=out, src=t)" if prefix is CUR else "nl.store(out, value=t)"
    load = "nisa.dma_copy(dst=t, src=a)" if prefix is CUR else "t[...] = nl.load(a)"
    deco = "\n".join(decorators)
    k = kern(
        tmp_path,
        prefix
        + imports
        + f"""

{deco}
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    {load}
    {store}
    return out
""",
        "k",
    )
    a = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    np.testing.assert_array_equal(simulate_kernel(k, [a]).outputs, a)


@pytest.mark.parametrize(
    "alloc",
    [
        "ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))",
        "ncc.sbuf.mod_alloc(base_addr=1024)",
        "ncc.sbuf.auto_alloc()",
        "ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size: (0, 4096 * idx))",
    ],
)
def test_direct_sbuf_allocation_is_an_sbuf_tile(tmp_path, alloc):
    k = kern(
        tmp_path,
        LEG
        + "import neuronxcc.nki.compiler as ncc\n"
        + f"""
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((2, nl.par_dim(128), 16), a.dtype, buffer={alloc})
    for i in nl.affine_range(2):
        t[i] = nl.load(a[:, i * 16:(i + 1) * 16])
    for i in nl.affine_range(2):
        nl.store(out[:, i * 16:(i + 1) * 16], value=nl.multiply(t[i], 2.0))
    return out
""",
    )
    a = np.random.default_rng(0).standard_normal((128, 32)).astype(np.float32)
    np.testing.assert_allclose(simulate_kernel(k, [a]).outputs, 2 * a)


def test_direct_psum_allocation_keeps_the_bank_limit(tmp_path):
    """A PSUM tile placed by ``ncc.psum.mod_alloc`` is still a PSUM tile: one bank at most."""
    k = kern(
        tmp_path,
        LEG
        + "import neuronxcc.nki.compiler as ncc\n"
        + """
@nki.jit
def k(a):
    out = nl.ndarray((128, 1024), nl.float32, buffer=nl.shared_hbm)
    p = nl.ndarray((128, 1024), nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0))
    return out
""",
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.zeros((128, 128), np.float32)])
    assert ei.value.diagnostic.code == "C2N3008"


@pytest.mark.parametrize("prefix", [CUR, LEG])
@pytest.mark.parametrize(
    "spelling",
    [
        "from {isa}.constants import oob_mode, dge_mode",
        "import {isa}.constants as C\noob_mode, dge_mode = C.oob_mode, C.dge_mode",
        "oob_mode, dge_mode = nisa.constants.oob_mode, nisa.constants.dge_mode",
    ],
)
def test_isa_constants_are_the_isa_enums(tmp_path, prefix, spelling):
    isa = "nki.isa" if prefix is CUR else "neuronxcc.nki.isa"
    p = tmp_path / "m.py"
    p.write_text(prefix + spelling.format(isa=isa) + "\nPAIR = (oob_mode.skip, dge_mode.swdge)\n")
    m = load_module(p)
    assert m.PAIR == (m.nisa.oob_mode.skip, m.nisa.dge_mode.swdge)
    assert (int(m.PAIR[0]), int(m.PAIR[1])) == (1, 1)


def test_unknown_name_in_constants_is_refused(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(CUR + "from nki.isa.constants import no_such_mode\n")
    with pytest.raises(DiagnosticError) as ei:
        load_module(p)
    assert "no_such_mode" in str(ei.value) and "C2N3001" in str(ei.value)


def test_nki_dtype_module_and_annotation(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        CUR
        + "import nki.dtype as nt\nimport numpy as np\n"
        + "def pick(d: nki.dtype = nl.bfloat16) -> nki.dtype:\n    return d\n"
        + "X = np.zeros(4, dtype=nt.float8_e4m3)\nSAME = nt.bfloat16 == nl.bfloat16\n"
    )
    m = load_module(p)
    assert m.X.dtype == np.dtype(ml_dtypes.float8_e4m3) and m.SAME
    assert m.pick() == m.nl.bfloat16


@pytest.mark.parametrize("name", ["float4_e2m1fn_x4", "float8_e4m3fn_x4", "float8_e5m2_x4"])
def test_x4_dtypes_move_packed_words(tmp_path, name):
    """An MX x4 tile holds four packed elements per 32-bit word: DMA moves the words intact."""
    k = kern(
        tmp_path,
        CUR
        + f"""
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, nl.{name}, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, nl.{name}, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out
""",
    )
    a = np.random.default_rng(1).integers(0, 2**32, (32, 8), dtype=np.uint64).astype(np.uint32)
    out = simulate_kernel(k, [a]).outputs
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, a)


def test_x4_dtypes_refuse_arithmetic(tmp_path):
    k = kern(
        tmp_path,
        CUR
        + """
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, nl.float8_e4m3fn_x4, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, nl.float32, buffer=nl.sbuf)
    u = nl.ndarray(a.shape, nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=u)
    return out
""",
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.ones((8, 8), np.float32)])
    d = ei.value.diagnostic
    assert d.code == "C2N3001" and "float8_e4m3fn_x4" in d.message and d.loc.line == 11


@pytest.mark.parametrize("prefix", [CUR, LEG])
def test_dtype_limits(tmp_path, prefix):
    p = tmp_path / "m.py"
    p.write_text(
        prefix
        + "V = (nl.fp32.min, nl.float32.max, nl.bfloat16.min, nl.float16.eps, nl.int8.min,"
        + " nl.uint16.max, nl.finfo(nl.bfloat16).max, nl.finfo(nl.float8_e4m3fn).max,"
        + " nl.finfo(nl.float32).tiny, nl.finfo(nl.float8_e5m2).bits, nl.tfloat32.eps,"
        + " nl.finfo(nl.float4_e2m1fn_x4).max)\n"
    )
    v = load_module(p).V
    f32, bf16 = np.finfo(np.float32), ml_dtypes.finfo(ml_dtypes.bfloat16)
    assert v[0] == float(f32.min) and v[1] == float(f32.max)
    assert v[2] == float(bf16.min) and v[6] == float(bf16.max)
    assert v[3] == float(np.finfo(np.float16).eps)
    assert (v[4], v[5]) == (-128, 65535)
    assert v[7] == 448.0 and v[8] == float(f32.tiny) and v[9] == 8
    assert v[10] == 2.0**-10 and v[11] == 6.0


def test_finfo_min_fills_a_tile(tmp_path):
    """The public attention kernels start a running max at ``nl.fp32.min``."""
    k = kern(
        tmp_path,
        LEG
        + """
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    m = nl.full(a.shape, fill_value=nl.fp32.min, dtype=nl.float32)
    nl.store(out, value=nl.maximum(m, nl.load(a)))
    return out
""",
    )
    a = np.full((4, 4), -np.inf, np.float32)
    np.testing.assert_array_equal(simulate_kernel(k, [a]).outputs, np.finfo(np.float32).min)


@pytest.mark.parametrize(
    ("imports", "use", "name", "line"),
    [
        ("from nki.collectives import all_reduce", "all_reduce(a)", "all_reduce", 9),
        ("import nki.collectives as cc", "cc.all_gather(a)", "all_gather", 9),
        ("from nki import collectives", "collectives.collective_permute(a)", "collective_perm", 9),
        ("import nki.collectives", "nki.collectives.all_to_all(a)", "all_to_all", 9),
    ],
)
def test_collectives_are_refused_by_name(tmp_path, imports, use, name, line):
    p = tmp_path / "port.py"
    p.write_text(CUR + f"{imports}\n\n\n@nki.jit\ndef k(a):\n    {use}\n    return a\n")
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(load_kernel(p), [np.ones((4, 4), np.float32)])
    d = ei.value.diagnostic
    assert d.code == "C2N3001" and d.loc.line == line
    assert f"nki.collectives.{name}" in d.message and "between NeuronCores" in d.message
