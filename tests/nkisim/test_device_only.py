"""Legacy ``nki.benchmark`` times a kernel on a Neuron device: the wrapped kernel refuses
(C2N3001, naming ``nki.benchmark``, at the port's line) when it is called, launched on a grid or
asked for its ``benchmark_result``, before any simulation work, in each spelling of the wrapper;
``baremetal`` of the same kernel still runs, and a library kernel stays refused by its name."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_module

LEG = """from neuronxcc import nki
import neuronxcc.nki.language as nl
from neuronxcc.nki import baremetal, benchmark

CALLS = []


@nki.jit
def copy(a):
    CALLS.append(1)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out
"""

USES = {
    "factory_call": "benchmark(warmup=5, iters=10)(copy)(a)",
    "direct_call": "nki.benchmark(copy, save_neff_name='file.neff')(a)",
    "grid": "benchmark(warmup=2, iters=3)(copy)[2](a)",
    "result": "benchmark(copy).benchmark_result.nc_latency",
}


def _module(tmp_path, use: str):
    p = tmp_path / "bench_port.py"
    p.write_text(textwrap.dedent(LEG) + f"\n\ndef run(a):\n    return {use}\n")
    return load_module(p), p


@pytest.mark.parametrize("use", sorted(USES))
def test_benchmark_is_refused_where_used_before_simulating(tmp_path, use):
    mod, path = _module(tmp_path, USES[use])
    with pytest.raises(DiagnosticError) as ei:
        mod.run(np.zeros((8, 4), np.float32))
    d = ei.value.diagnostic
    assert d.code == "C2N3001"
    assert "nki.benchmark" in d.message and "device" in d.message
    assert d.loc.file == str(path)
    assert d.loc.line == len(path.read_text().splitlines())
    assert mod.CALLS == []  # refused before the kernel ran


def test_baremetal_of_the_same_kernel_still_runs(tmp_path):
    mod, _ = _module(tmp_path, "baremetal(copy)(a)")
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = mod.run(a)
    np.testing.assert_array_equal(out[0] if isinstance(out, (list, tuple)) else out, a)


def test_a_library_kernel_stays_refused_by_its_own_name(tmp_path):
    use = "benchmark(warmup=5, iters=10)(sas)(a)"
    p = tmp_path / "lib_port.py"
    p.write_text(
        textwrap.dedent(LEG)
        + "from neuronxcc.nki.kernels.vision import select_and_scatter_kernel as sas\n"
        + f"\n\ndef run(a):\n    return {use}\n"
    )
    with pytest.raises(DiagnosticError) as ei:
        load_module(p).run(np.zeros((8, 4), np.float32))
    assert "select_and_scatter_kernel" in ei.value.diagnostic.message


def test_the_public_code_adapter_counts_a_benchmark_refusal_as_no_case(tmp_path):
    from bench.public_nki import classify

    mod, _ = _module(tmp_path, USES["factory_call"])
    with pytest.raises(DiagnosticError) as bench:
        mod.run(np.zeros((8, 4), np.float32))
    assert classify(bench.value)[0] == "device"
    p = tmp_path / "lib_port2.py"
    p.write_text(
        textwrap.dedent(LEG)
        + "from neuronxcc.nki.kernels.vision import select_and_scatter_kernel as sas\n"
        + "\n\ndef run(a):\n    return benchmark(sas)(a)\n"
    )
    with pytest.raises(DiagnosticError) as lib:
        load_module(p).run(np.zeros((8, 4), np.float32))
    assert classify(lib.value)[0] == "refused"
