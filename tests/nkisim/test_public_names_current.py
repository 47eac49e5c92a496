"""Names of the current ``nki`` API reference beyond the instructions: ``nisa.NkiValidationError``
(the type a violated hardware constraint is raised as), ``nisa.NkiInstruction``,
``nisa.get_nc_sub_version``, ``nl.DType``, ``nl.MemoryRegion``, the ``nl.average`` op."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, load_module, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"


def module(tmp_path, body: str):
    p = tmp_path / "port.py"
    p.write_text(CUR + textwrap.dedent(body))
    return load_module(p), p


TOO_TALL = """

@nki.jit
def k(a):
    t = nl.ndarray(({p}, 4), dtype=nl.float32, buffer=nl.sbuf)
    return a


def call(a):
    return nki.simulate(k)(a)


def caught(a):
    try:
        nki.simulate(k)(a)
    except nisa.NkiValidationError as exc:
        return str(exc)
    return "ran"
"""


@pytest.mark.parametrize("p", [129, 256])
def test_a_violated_hardware_constraint_is_an_nki_validation_error(tmp_path, p):
    mod, path = module(tmp_path, TOO_TALL.format(p=p))
    a = np.zeros((2, 2), np.float32)
    assert "C2N3002" in mod.caught(a)
    with pytest.raises(DiagnosticError) as ei:  # and still the diagnostic, at the line
        mod.call(a)
    assert ei.value.diagnostic.code == "C2N3002" and ei.value.diagnostic.loc.line == 8


def test_an_unsupported_api_is_no_validation_error(tmp_path):
    mod, _ = module(
        tmp_path,
        """

@nki.jit
def k(a):
    nisa.nc_matmul_mx(a, a, a, a, a)
    return a


def caught(a):
    try:
        nki.simulate(k)(a)
    except nisa.NkiValidationError:
        return "validation"
    except Exception as exc:
        return type(exc).__name__
""",
    )
    assert mod.caught(np.zeros((2, 2), np.float32)) == "DiagnosticError"


@pytest.mark.parametrize(("op", "fn"), [("nl.average", np.mean), ("nl.add", np.sum)])
def test_average_op_reduces_to_the_mean(tmp_path, op, fn):
    mod, p = module(
        tmp_path,
        f"""

@nki.jit
def k(a):
    out = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    r = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=r, op={op}, data=t, axis=1)
    nisa.dma_copy(dst=out, src=r)
    return out
""",
    )
    a = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)
    out = simulate_kernel(load_kernel(p, "k"), [a]).outputs
    np.testing.assert_allclose(out[:, 0], fn(a, axis=1), rtol=1e-6)


def test_average_is_an_op_not_a_function(tmp_path):
    mod, _ = module(tmp_path, "\n\ndef f(x):\n    return nl.average(x, axis=1)\n")
    with pytest.raises(DiagnosticError) as ei:
        mod.f(None)
    assert ei.value.diagnostic.code == "C2N3001" and "nl.mean" in ei.value.diagnostic.message


def test_memory_region_and_dtype_names(tmp_path):
    mod, p = module(
        tmp_path,
        """

def pick(dtype: nl.DType):
    return dtype


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=pick(nl.float32), buffer=nl.MemoryRegion.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.MemoryRegion.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    assert nl.is_sbuf(t) and t.buffer == nl.MemoryRegion.sbuf
    assert isinstance(nl.bfloat16, nl.DType)
    return out
""",
    )
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(simulate_kernel(load_kernel(p, "k"), [a]).outputs, a)


def test_sub_version_and_instruction_dependencies(tmp_path):
    mod, _ = module(
        tmp_path,
        """

def sub():
    return nisa.get_nc_sub_version()


def chain():
    a, b, c = nisa.NkiInstruction(), nisa.NkiInstruction(), nisa.NkiInstruction()
    return c.depends_on(b, a).depends_on(a) is c


def bad():
    return nisa.NkiInstruction().depends_on(3)
""",
    )
    assert mod.sub() == 0 and mod.chain()
    with pytest.raises(DiagnosticError) as ei:
        mod.bad()
    assert ei.value.diagnostic.code == "C2N3001"


def test_every_current_instruction_takes_a_name():
    """The reference gives every ``nki.isa`` instruction a ``name=`` (the instruction's label)."""
    import inspect

    from cuda2nki.nkisim.engine import HARMLESS_KW
    from cuda2nki.nkisim.importer import build_modules

    isa = build_modules()["nki.isa"]
    lacking = []
    for k, fn in vars(isa).items():
        if k.startswith(("_", "get_", "register_")) or isinstance(fn, type) or not callable(fn):
            continue
        if not getattr(fn, "__module__", "").startswith("cuda2nki.nkisim"):
            continue
        params = inspect.signature(fn).parameters
        varkw = any(p.kind is p.VAR_KEYWORD for p in params.values())
        if "name" not in params and not (varkw and "name" in HARMLESS_KW):
            lacking.append(k)
    assert lacking == []


def test_named_instructions_and_a_dtype_argument(tmp_path):
    mod, p = module(
        tmp_path,
        """

@nki.jit
def k(a, dtype=nl.bfloat16):
    out = nl.ndarray(a.shape, dtype=dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf, name="t")
    u = nl.ndarray(a.shape, dtype=dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, name="load")
    nisa.memset(dst=u, value=1.0, name="ones")
    nisa.tensor_tensor(dst=u, data1=t, data2=u, op=nl.add, name="add_one")
    nisa.tensor_scalar(dst=u, data=u, op0=nl.multiply, operand0=2.0, name="twice")
    nisa.activation(dst=u, op=nl.copy, data=u, name="copy")
    nisa.dma_copy(dst=out, src=u, name="store")
    return out
""",
    )
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = simulate_kernel(load_kernel(p, "k"), {"a": a, "dtype": np.float32}).outputs
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, (a + 1) * 2)


@pytest.mark.parametrize(
    ("extra", "refused"),
    [
        ("", False),
        (", priority=1", False),
        (", oob_mode=nisa.oob_mode.error, dge_mode=nisa.dge_mode.unknown", False),
        (", oob_mode=nisa.oob_mode.skip", True),
    ],
)
def test_dma_transpose_takes_the_reference_arguments(tmp_path, extra, refused):
    _, p = module(
        tmp_path,
        f"""

@nki.jit
def k(a):
    out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=a{extra}, name="tr")
    nisa.dma_copy(dst=out, src=t)
    return out
""",
    )
    a = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    if refused:
        with pytest.raises(DiagnosticError) as ei:
            simulate_kernel(load_kernel(p, "k"), [a])
        assert ei.value.diagnostic.code == "C2N3001" and ei.value.diagnostic.loc.line == 10
    else:
        np.testing.assert_array_equal(simulate_kernel(load_kernel(p, "k"), [a]).outputs, a.T)


@pytest.mark.parametrize(
    ("call", "want"),
    [
        ("nl.is_hbm(buffer=nl.shared_hbm)", True),
        ("nl.is_sbuf(buffer=nl.MemoryRegion.sbuf)", True),
        ("nl.is_psum(buffer=nl.sbuf)", False),
        ("nl.is_on_chip(buffer=nl.psum)", True),
        ("nl.is_hbm(nl.sbuf)", False),
    ],
)
def test_buffer_predicates_take_buffer_by_keyword(tmp_path, call, want):
    mod, _ = module(tmp_path, f"\n\ndef f():\n    return {call}\n")
    assert mod.f() is want
