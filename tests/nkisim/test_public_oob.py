"""Out-of-bounds indirect accesses through the public Python API: exactly ``IndexError`` with
NumPy's message about the flattened index (what public tests assert), carrying C2N3019; the
simulator's own entry point keeps :class:`DiagnosticIndexError`."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import DiagnosticIndexError, load_module, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"
LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"

# (header, body); ``idx`` is an index tile of ``step * i`` for i < rows, the input is (n, m)
LOADS = {
    "dma_copy gather, legacy": (
        LEG,
        """
        ix, iy = nl.mgrid[0:rows, 0:m]
        idx = nisa.iota(step * nl.arange(rows)[:, None], dtype=np.int32)
        t = nisa.memset(shape=(rows, m), value=-1, dtype=a.dtype)
        nisa.dma_copy(src=a[idx, iy], dst=t[ix, iy], oob_mode=nisa.oob_mode.error)
        nl.store(out[0:rows, 0:m], value=t)
        """,
    ),
    "nl.load gather, legacy": (
        LEG,
        """
        i_f = nl.arange(m)[None, :]
        idx = nisa.iota(step * nl.arange(rows)[:, None], dtype=np.int32)
        t = nl.load(a[idx, i_f])
        nl.store(out[0:rows, 0:m], value=t)
        """,
    ),
    "dma_copy scatter, legacy": (
        LEG,
        """
        ix, iy = nl.mgrid[0:rows, 0:m]
        idx = nisa.iota(step * nl.arange(rows)[:, None], dtype=np.int32)
        t = nl.load(a[0:rows, 0:m])
        nisa.dma_copy(dst=out[idx, iy], src=t[ix, iy], oob_mode=nisa.oob_mode.error)
        """,
    ),
}


def kernel_file(tmp_path, header: str, body: str, rows: int, step: int):
    text = (
        header
        + "import numpy as np\n\n@nki.jit\ndef k(a):\n"
        + "    n, m = a.shape\n"
        + "    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)\n"
        + f"    rows, step = {rows}, {step}\n"
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
        + "\n    return out\n"
    )
    p = tmp_path / "oob_port.py"
    p.write_text(text)
    return load_module(p), p


@pytest.mark.parametrize("case", list(LOADS))
@pytest.mark.parametrize(("shape", "rows", "step"), [((128, 512), 64, 3), ((64, 32), 40, 2)])
def test_public_call_raises_exactly_index_error_with_numpys_message(
    tmp_path, case, shape, rows, step
):
    header, body = LOADS[case]
    mod, path = kernel_file(tmp_path, header, body, rows, step)
    a = np.zeros(shape, np.float32)
    n, m = shape
    first = next(step * i for i in range(rows) if step * i >= n)
    with pytest.raises(IndexError) as ei:
        mod.k(a)
    exc = ei.value
    assert type(exc) is IndexError
    assert str(exc) == f"index {first * m} is out of bounds for axis 0 with size {n * m}"
    # the diagnostic travels with it: attribute, cause, and a note naming file:line
    assert exc.diagnostic.code == "C2N3019"
    assert exc.diagnostic.loc.file == str(path)
    assert isinstance(exc.__cause__, DiagnosticIndexError)
    assert any("C2N3019" in note for note in exc.__notes__)


@pytest.mark.parametrize("case", list(LOADS))
def test_own_entry_point_keeps_the_diagnostic_error(tmp_path, case):
    header, body = LOADS[case]
    mod, path = kernel_file(tmp_path, header, body, 64, 3)
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(mod.k, [np.zeros((128, 512), np.float32)])
    assert isinstance(ei.value, DiagnosticIndexError)
    assert ei.value.numpy_message == "index 66048 is out of bounds for axis 0 with size 65536"
    assert ei.value.diagnostic.loc.file == str(path)


def test_in_bounds_indirect_access_still_runs(tmp_path):
    header, body = LOADS["dma_copy gather, legacy"]
    mod, _ = kernel_file(tmp_path, header, body, 64, 2)
    a = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)
    out = mod.k(a)
    np.testing.assert_array_equal(out[:64], a[0:128:2])
