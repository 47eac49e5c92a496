"""Start-up stays cheap: commands import only what they use (``ml_dtypes`` costs most of a
second, NumPy and the front end a few tenths)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    ).stdout
    return set(out.splitlines()[-1].split())


def test_version_imports_neither_numpy_nor_ml_dtypes() -> None:
    mods = _modules_after(
        "from cuda2nki.cli.main import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--version'])"
    )
    assert "cuda2nki.cli.main" in mods
    assert "ml_dtypes" not in mods and "numpy" not in mods
    assert "cuda2nki.frontend.ast" not in mods


def test_rules_does_not_import_ml_dtypes() -> None:
    mods = _modules_after(
        "from cuda2nki.cli.main import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['rules'])"
    )
    assert "ml_dtypes" not in mods


def test_binding_imports_ml_dtypes_only_for_bf16() -> None:
    mods = _modules_after(
        "from cuda2nki.binding import dtype_of, dtype_name\n"
        "import numpy as np\n"
        "assert dtype_of('float32') == np.float32\n"
        "assert dtype_name(np.dtype(np.int16)) == 'int16'"
    )
    assert "cuda2nki.binding" in mods and "ml_dtypes" not in mods
    mods = _modules_after(
        "from cuda2nki.binding import dtype_of, dtype_name\n"
        "dt = dtype_of('bfloat16')\n"
        "assert dtype_name(dt) == 'bfloat16', dtype_name(dt)\n"
        "assert dtype_name(dtype_of('float8_e5m2')) == 'float8_e5m2'"
    )
    assert "ml_dtypes" in mods


def test_dtype_table_is_ordered_and_resolves_lazily() -> None:
    from cuda2nki.dtypes import NUMPY_DTYPES, DtypeTable

    assert list(NUMPY_DTYPES)[-1] == "tfloat32"
    assert NUMPY_DTYPES.name_of(NUMPY_DTYPES["tfloat32"]) == "float32"
    assert "bfloat16" in NUMPY_DTYPES and "float128" not in NUMPY_DTYPES
    table = DtypeTable({"b": "bfloat16"})
    assert table["b"].itemsize == 2


def test_simulator_imports_ml_dtypes_only_for_narrow_types() -> None:
    run_f32 = (
        "import numpy as np\n"
        "from cuda2nki import nkisim\n"
        "from cuda2nki.nkisim import language as nl\n"
        "def k(a):\n"
        "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
        "    t = nl.load(a)\n"
        "    nl.store(out, value=nl.exp(t))\n"
        "    return out\n"
        "x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)\n"
        "got = np.asarray(nkisim.simulate_kernel(k, {'a': x}).outputs)\n"
        "assert np.allclose(got, np.exp(x), rtol=1e-5)\n"
        "assert nl.float16.np_dtype == np.float16 and nl.bfloat16.itemsize == 2\n"
        "assert nl.bfloat16 != nl.float16 and nl.float8_e4m3.name == 'float8_e4m3'\n"
    )
    mods = _modules_after(run_f32)
    assert "cuda2nki.nkisim" in mods and "ml_dtypes" not in mods
    mods = _modules_after(
        run_f32 + "assert nl.bfloat16.np_dtype.name == 'bfloat16'\n"
        "from cuda2nki.nkisim import dtypes\n"
        "assert dtypes.as_dtype(np.zeros(1, nl.bfloat16.np_dtype).dtype) is nl.bfloat16\n"
        "assert dtypes.finfo(nl.float8_e4m3fn).max == 448.0\n"
        "assert dtypes.is_bf16(dtypes.BF16) and not dtypes.is_bf16(np.dtype(np.float16))"
    )
    assert "ml_dtypes" in mods


def test_sandbox_preload_and_fp32_check_leave_ml_dtypes_out() -> None:
    mods = _modules_after(
        "from cuda2nki.fidelity.sandbox_child import _preload\n"
        "_preload()\n"
        "from cuda2nki.fidelity.sandbox import _module_roots\n"
        "assert _module_roots()\n"
    )
    assert "cuda2nki.nkisim.isa" in mods and "ml_dtypes" not in mods
    assert "cuda2nki.ir.nodes" not in mods  # the IR is the checker's, not the sandbox's
    mods = _modules_after(
        "from pathlib import Path\n"
        "from cuda2nki.fidelity.check import check\n"
        "rep = check(Path('corpus/activation/gelu_tanh.cu'),\n"
        "            Path('corpus/activation/ports/gelu_tanh_port.py'), seeds=1)\n"
        "assert rep.verdict == 'pass', rep.verdict"
    )
    assert "cuda2nki.fidelity.check" in mods and "ml_dtypes" not in mods
