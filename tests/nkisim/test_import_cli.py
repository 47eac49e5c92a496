"""Namespace import context, kernel loading, and the ``cuda2nki simulate`` command."""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pytest

from cuda2nki.cli.main import main
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, load_module, nki_namespace, simulate_kernel

CUR = """
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def scale(a, factor=2.0):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=factor)
    nisa.dma_copy(dst=out, src=t)
    return out
"""


def write(tmp_path, text, name="port.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


@pytest.mark.parametrize(
    "imports",
    [
        "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl",
        "from neuronxcc import nki\nfrom neuronxcc.nki import language as nl",
        "import neuronxcc.nki\nnki = neuronxcc.nki\nnl = neuronxcc.nki.language",
    ],
)
def test_legacy_import_spellings(tmp_path, imports):
    p = write(
        tmp_path,
        imports
        + textwrap.dedent("""

        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(a))
            return out
    """),
    )
    k = load_kernel(p)
    assert k.legacy
    a = np.ones((4, 4), np.float32)
    np.testing.assert_array_equal(simulate_kernel(k, [a]).outputs, a)


def test_nothing_installed_outside_the_context(tmp_path):
    import cuda2nki  # noqa: F401
    import cuda2nki.nkisim  # noqa: F401

    assert "nki" not in sys.modules and "neuronxcc" not in sys.modules
    with nki_namespace():
        import nki.language as nl  # noqa: F401

        assert sys.modules["nki"].__name__ == "nki"
    assert "nki" not in sys.modules and "nki.language" not in sys.modules


def test_real_installed_nki_is_not_shadowed(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "nki"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with nki_namespace() as mods:
        import nki

        assert getattr(nki, "REAL", False) and nki is not mods["nki"]
        import neuronxcc.nki  # still ours: no real neuronxcc installed

        assert neuronxcc.nki is mods["neuronxcc.nki"]
    with nki_namespace(shadow=True) as mods:
        import nki

        assert nki is mods["nki"]
    sys.modules.pop("nki", None)


def test_unknown_names_raise_not_supported(tmp_path):
    p = write(
        tmp_path,
        """
        import nki
        import nki.language as nl

        @nki.jit
        def k(a):
            x = nl.frobnicate(a)
            return a
    """,
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(load_kernel(p), [np.ones((2, 2), np.float32)])
    d = ei.value.diagnostic
    assert d.code == "C2N3001" and d.loc.line == 7 and "nki.language.frobnicate" in d.message


def test_unknown_submodule_import(tmp_path):
    p = write(tmp_path, "import nki\nimport nki.compiler.kernel_builder\n")
    with pytest.raises(DiagnosticError) as ei:
        load_module(p)
    assert ei.value.diagnostic.code == "C2N3001" and ei.value.diagnostic.loc.line == 2


def test_load_kernel_requires_a_name_when_ambiguous(tmp_path):
    p = write(tmp_path, CUR + CUR.replace("def scale", "def scale2"))
    with pytest.raises(DiagnosticError) as ei:
        load_kernel(p)
    assert ei.value.diagnostic.code == "C2N3024"
    assert load_kernel(p, "scale2").__name__ == "scale2"


def test_nki_simulate_and_lnc2(tmp_path):
    p = write(
        tmp_path,
        """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            half = a.shape[0] // nl.num_programs()
            r = slice(nl.program_id(0) * half, (nl.program_id(0) + 1) * half)
            t = nl.ndarray((half, a.shape[1]), a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[r, :])
            nisa.dma_copy(dst=out[r, :], src=t)
            return out
    """,
    )
    mod = load_module(p)
    a = np.arange(64, dtype=np.float32).reshape(16, 4)
    np.testing.assert_array_equal(mod.nki.simulate(mod.k)(a), a)
    np.testing.assert_array_equal(mod.nki.simulate(mod.k[2])(a), a)


def test_cli_simulate_generates_inputs_and_writes_outputs(tmp_path, capsys):
    p = write(tmp_path, CUR)
    out = tmp_path / "out.npz"
    rc = main(["simulate", str(p), "--shape", "a=128,8", "--seed", "3", "--out", str(out)])
    assert rc == 0
    with np.load(out) as z:
        got = z["out0"]
    rng = np.random.default_rng([3, __import__("zlib").crc32(b"a")])
    np.testing.assert_array_equal(got, 2 * rng.standard_normal((128, 8), dtype=np.float32))


def test_cli_simulate_inputs_npz_profile_json(tmp_path, capsys):
    p = write(tmp_path, CUR)
    inp = tmp_path / "in.npz"
    a = np.ones((128, 8), np.float32)
    np.savez(inp, a=a, factor=np.float32(3.0))
    out = tmp_path / "out.npz"
    rc = main(
        [
            "simulate",
            str(p),
            "--inputs",
            str(inp),
            "--out",
            str(out),
            "--profile",
            "--format",
            "json",
            "--target",
            "trn1",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["target"] == "trn1" and doc["profile"]["instructions"] == {"dma": 2, "vector": 1}
    with np.load(out) as z:
        np.testing.assert_array_equal(z["out0"], 3 * a)


def test_cli_bf16_inputs_and_outputs(tmp_path):
    p = write(tmp_path, CUR)
    inp = tmp_path / "in.npz"
    np.savez(inp, a=np.full((128, 8), 1.0 + 2**-9, np.float32))
    out = tmp_path / "out.npz"
    assert (
        main(["simulate", str(p), "--inputs", str(inp), "--dtype", "a=bfloat16", "--out", str(out)])
        == 0
    )
    with np.load(out) as z:
        assert z["out0"].dtype == np.float32
        np.testing.assert_array_equal(z["out0"], 2.0)


def test_cli_port_error_exit_2_with_line(tmp_path, capsys):
    p = write(
        tmp_path,
        """
        import nki
        import nki.language as nl

        @nki.jit
        def k(a):
            t = nl.ndarray((129, 2), nl.float32, buffer=nl.sbuf)
            return a
    """,
    )
    rc = main(["simulate", str(p), "--shape", "a=4,4", "--out", str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and f"{p}:7:" in err and "C2N3002" in err


def test_cli_missing_shape_is_an_input_error(tmp_path, capsys):
    p = write(tmp_path, CUR)
    rc = main(["simulate", str(p), "--out", str(tmp_path / "o.npz")])
    assert rc == 2 and "C2N3025" in capsys.readouterr().err


def test_cli_python_exception_in_port(tmp_path, capsys):
    p = write(
        tmp_path,
        """
        import nki

        @nki.jit
        def k(a):
            return a.undefined_attribute
    """,
    )
    rc = main(["simulate", str(p), "--shape", "a=4,4", "--out", str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and "C2N3023" in err and f"{p}:6:" in err and "Traceback" not in err


def test_cli_named_outputs(tmp_path):
    p = write(
        tmp_path,
        """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(a):
            x = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            y = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=x, src=a)
            nisa.dma_copy(dst=y, src=a)
            return {"first": x, "second": y}
    """,
    )
    out = tmp_path / "o.npz"
    assert main(["simulate", str(p), "--shape", "a=2,2", "--out", str(out)]) == 0
    with np.load(out) as z:
        assert sorted(z.files) == ["first", "second"]


def test_tuple_and_scalar_arguments(tmp_path):
    p = write(
        tmp_path,
        """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(parts, alpha):
            a, b = parts
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            ta = nl.load(a)
            tb = nl.load(b)
            r = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
            nisa.scalar_tensor_tensor(dst=r, data=ta, op0=nl.multiply, operand0=alpha,
                                      op1=nl.add, operand1=tb)
            nisa.dma_copy(dst=out, src=r)
            return out
    """,
    )
    a = np.ones((4, 3), np.float32)
    b = np.full((4, 3), 2.0, np.float32)
    got = simulate_kernel(load_kernel(p), [(a, b), np.float32(3.0)]).outputs
    np.testing.assert_array_equal(got, 5.0)


def test_cli_legacy_grid(tmp_path):
    p = write(
        tmp_path,
        """
        from neuronxcc import nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            r = slice(nl.program_id(0) * 64, (nl.program_id(0) + 1) * 64)
            nl.store(out[r, :], value=nl.add(nl.load(a[r, :]), nl.program_id(0)))
            return out
    """,
    )
    inp = tmp_path / "in.npz"
    np.savez(inp, a=np.zeros((128, 4), np.float32))
    out = tmp_path / "o.npz"
    assert main(["simulate", str(p), "--inputs", str(inp), "--grid", "2", "--out", str(out)]) == 0
    with np.load(out) as z:
        np.testing.assert_array_equal(z["out0"][:64], 0)
        np.testing.assert_array_equal(z["out0"][64:], 1)
