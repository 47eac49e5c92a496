"""The public-code adapter binds the legacy compiler's kernel library to a samples revision's
reference folder (which the samples repository documents as that library's source): inside the
binding ``neuronxcc.nki.kernels.<module>`` and the package's top-level names are the folder's
kernels, which run on the simulator; outside it the simulator refuses the library as before."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from bench import public_nki as pn
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import nki_namespace

VISION = """
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def double_kernel(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(a), 2.0))
    return out
"""


@pytest.fixture
def folder(tmp_path):
    ref = tmp_path / "src" / "reference"
    ref.mkdir(parents=True)
    (ref / "__init__.py").write_text("")
    (ref / "vision.py").write_text(VISION)
    return ref


def _run(kernel):
    from neuronxcc.nki import simulate_kernel

    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    np.testing.assert_array_equal(simulate_kernel(kernel, a), 2 * a)


def test_library_modules_and_top_level_names_are_the_reference_kernels(folder):
    with nki_namespace(shadow=True), pn.kernel_library(folder):
        vision = importlib.import_module("neuronxcc.nki.kernels.vision")
        _run(vision.double_kernel)
        from neuronxcc.nki.kernels import double_kernel

        _run(double_kernel)
        import neuronxcc.nki as nki

        assert nki.kernels.vision is vision
        with pytest.raises((ImportError, DiagnosticError)):  # a name the folder lacks
            from neuronxcc.nki.kernels import no_such_kernel  # noqa: F401


def test_outside_the_binding_the_library_is_refused_again(folder):
    with nki_namespace(shadow=True):
        with pn.kernel_library(folder):
            importlib.import_module("neuronxcc.nki.kernels.vision")
        assert "neuronxcc.nki.kernels.vision.double_kernel" not in sys.modules
        from neuronxcc.nki.kernels.vision import resize_nearest_fixed_dma_kernel as k

        with pytest.raises(DiagnosticError) as ei:
            k(np.zeros((1,), np.float32))
        assert ei.value.diagnostic.code == "C2N3001"


def test_only_a_unit_case_reference_folder_is_bound(folder, tmp_path):
    src = str(folder.parent)
    assert pn._reference_folder([src, str(folder)]) == folder
    assert pn._reference_folder([src]) is None
    assert pn._reference_folder([src, str(tmp_path / "missing" / "reference")]) is None
