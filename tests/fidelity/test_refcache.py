"""The CUDA kernel's runs are remembered by what determines them: a second check of another port
of the same kernel reuses the reference runs, and anything that changes a run (an input byte, a
scalar, the kernel's code) computes it afresh."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki import frontend
from cuda2nki.binding import load_binding
from cuda2nki.fidelity import refcache
from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.check_reference import _reference

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "corpus/basic/vector_add.cu"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    refcache.clear()


def _point() -> tuple:
    tu = frontend.parse_source(VADD.read_text(), str(VADD))
    b = load_binding(VADD.with_suffix(".toml"))
    r = b.resolve({"N": 300})
    rng = np.random.default_rng(0)
    arrays = {
        "a": rng.standard_normal(300).astype(np.float32),
        "b": rng.standard_normal(300).astype(np.float32),
        "out": np.zeros(300, np.float32),
    }
    return tu, b, r, arrays


def test_same_run_is_remembered_and_handed_out_as_a_copy() -> None:
    tu, _, r, arrays = _point()
    name = tu.kernels[0].name
    first = _reference(tu, name, r, arrays)[0]["out"]
    np.testing.assert_array_equal(first, arrays["a"] + arrays["b"])
    first[:] = 7.0  # a caller writing into its copy changes nothing remembered
    again = _reference(tu, name, r, {k: v.copy() for k, v in arrays.items()})[0]["out"]
    np.testing.assert_array_equal(again, arrays["a"] + arrays["b"])
    assert refcache.stats() == {"hits": 1, "misses": 1}


def test_any_change_to_a_run_computes_it_afresh() -> None:
    tu, b, r, arrays = _point()
    name = tu.kernels[0].name
    _reference(tu, name, r, arrays)
    changed = {**arrays, "a": arrays["a"].copy()}
    changed["a"][-1] += 1.0  # one input element
    got = _reference(tu, name, r, changed)[0]["out"]
    assert got[-1] == changed["a"][-1] + arrays["b"][-1]
    # another kernel text (the sum becomes a difference) at the same point and inputs
    other = frontend.parse_source(
        VADD.read_text().replace("out[i] = a[i] + b[i]", "out[i] = a[i] - b[i]"), str(VADD)
    )
    diff = _reference(other, name, r, arrays)[0]["out"]
    np.testing.assert_array_equal(diff, arrays["a"] - arrays["b"])
    assert refcache.stats() == {"hits": 0, "misses": 3}


def test_a_second_port_of_the_kernel_reuses_the_reference_runs() -> None:
    ports = ROOT / "corpus/basic/ports"
    good = check(VADD, ports / "vector_add_port.py", seeds=2, extra_points=False)
    misses = refcache.stats()["misses"]
    assert misses and not refcache.stats()["hits"]
    again = check(VADD, ports / "vector_add_port.py", seeds=2, extra_points=False)
    assert refcache.stats() == {"hits": misses, "misses": misses}
    assert again.verdict == good.verdict == "pass"
    assert again.numerics == good.numerics
