"""Documented names the simulator does not model import like upstream and are refused (C2N3001,
naming the API and the reason) where the port uses them; an undocumented name is refused at the
import itself."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, load_module, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"

COPY = """

@nki.jit
def copy(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out
"""


def write(tmp_path, text: str):
    p = tmp_path / "port.py"
    p.write_text(textwrap.dedent(text))
    return p


@pytest.mark.parametrize(
    "imports",
    [
        "from nki.isa import sendrecv",
        "from nki.isa import sendrecv as sr, nc_matmul_mx",
        "from nki.isa import (\n    topk,\n    quantize_mx,\n)",
        "from nki.collectives import ReplicaGroup, all_gather_v",
        "from nki.collectives import rank_id, reduce_scatter",
        "from neuronxcc.nki.isa import quantize_mx",
    ],
)
def test_module_importing_unmodelled_names_runs_its_other_kernels(tmp_path, imports):
    p = write(tmp_path, CUR + imports + "\n" + COPY)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = simulate_kernel(load_kernel(p, "copy"), [a]).outputs
    np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize(
    ("imports", "use", "api", "reason"),
    [
        ("from nki.isa import sendrecv", "sendrecv(t, t, 1, 0, 0)", "nki.isa.sendrecv", "logical"),
        ("from nki.isa import sendrecv as sr", "sr(t, t, 1, 0, 0)", "nki.isa.sendrecv", "logical"),
        (
            "from nki.collectives import ReplicaGroup",
            "g = ReplicaGroup([[0, 1]])",
            "nki.collectives.ReplicaGroup",
            "between NeuronCores",
        ),
        (
            "from nki.collectives import ReplicaGroup",
            "g = ReplicaGroup.from_list([[0, 1]])",
            "nki.collectives.ReplicaGroup",
            "between NeuronCores",
        ),
        ("from nki.isa import topk", "topk(dst=t, data=t, k=8)", "nki.isa.topk", "snake"),
    ],
)
def test_imported_unmodelled_name_is_refused_at_its_use(tmp_path, imports, use, api, reason):
    p = write(
        tmp_path,
        CUR
        + imports
        + f"""


@nki.jit
def k(a):
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    {use}
    return a
""",
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(load_kernel(p, "k"), [np.ones((4, 4), np.float32)])
    d = ei.value.diagnostic
    assert d.code == "C2N3001" and (d.loc.file, d.loc.line) == (str(p), 10)
    assert f"'{api}'" in d.message and reason in d.message


def test_namespace_read_of_unmodelled_name_is_refused_on_the_spot(tmp_path):
    p = write(tmp_path, CUR + "\n\ndef f():\n    return nisa.sendrecv\n")
    mod = load_module(p)
    with pytest.raises(DiagnosticError) as ei:
        mod.f()
    d = ei.value.diagnostic
    assert d.code == "C2N3001" and d.loc.line == 7 and "'nki.isa.sendrecv'" in d.message


@pytest.mark.parametrize(
    "imports",
    ["from nki.isa import no_such_instruction", "from nki.collectives import no_such_collective"],
)
def test_undocumented_name_is_refused_at_the_import(tmp_path, imports):
    p = write(tmp_path, CUR + imports + "\n")
    with pytest.raises(DiagnosticError) as ei:
        load_module(p)
    d = ei.value.diagnostic
    assert d.code == "C2N3001" and d.loc.line == 4


def test_refused_name_passes_through_jit_and_refuses_when_launched(tmp_path):
    p = write(
        tmp_path,
        CUR
        + "from nki.collectives import all_gather\n"
        + "gather = nki.jit(all_gather)\n"
        + "\n\ndef launch(a):\n    return gather(a)\n",
    )
    mod = load_module(p)
    with pytest.raises(DiagnosticError) as ei:
        mod.launch(np.ones((2, 2), np.float32))
    assert ei.value.diagnostic.code == "C2N3001"
    assert ei.value.diagnostic.loc.line == 9
