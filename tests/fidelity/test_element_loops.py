"""C2N5010 (a loop addressing one element per iteration) reads what the loop's instructions move:
a per-partition scalar operand (``operand0=w[:, j:j+1]``, a filter tap applied to a whole tile)
is not per-element work, while the same slice as the data or the destination is."""

from __future__ import annotations

import textwrap

import pytest

from cuda2nki.fidelity.portscan import scan, static_findings

HEAD = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(x, w):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    xt = nl.ndarray((128, 518), dtype=nl.float32, buffer=nl.sbuf)
    wt = nl.ndarray((128, 7), dtype=nl.float32, buffer=nl.sbuf)
"""

TAIL = """
    nisa.dma_copy(dst=out, src=acc)
    return out
"""

SCALAR_TAP = """
    for j in range(7):
        nisa.tensor_scalar(dst=acc, data=xt[0:128, j:j + 512], op0=nl.multiply, operand{k}=wt[0:128, j:j + 1])
"""

ELEMENT = {
    "data": """
    for j in range(7):
        nisa.tensor_scalar(dst=acc, data=xt[0:128, j:j + 1], op0=nl.multiply, operand0=2.0)
""",
    "dst": """
    for j in range(512):
        nisa.tensor_copy(dst=acc[0:128, j:j + 1], src=xt[0:128, j:j + 1])
""",
    "dma": """
    for j in range(512):
        nisa.dma_copy(dst=acc[0:128, nl.ds(j, 1)], src=x[0:128, j:j + 1])
""",
}


def _ids(body: str) -> set[str]:
    src = textwrap.dedent(HEAD).rstrip() + "\n" + body.rstrip() + "\n" + TAIL
    info, tree = scan("k.py", src)
    return {d.code for d in static_findings(info, tree)}


@pytest.mark.parametrize("k", ["0", "1"])
def test_a_per_partition_scalar_operand_is_not_element_work(k: str) -> None:
    assert "C2N5010" not in _ids(SCALAR_TAP.format(k=k))


@pytest.mark.parametrize("where", ELEMENT)
def test_a_single_element_slice_of_the_data_is(where: str) -> None:
    assert "C2N5010" in _ids(ELEMENT[where])
