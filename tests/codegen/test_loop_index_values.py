"""A loop whose variable is read only as a value (``(float)(k + 1)``, an operand ``Param(k)``)
keeps its variable: the emitted loop binds the name the body reads (no undefined name), and the
loop-invariant loads inside it are still hoisted (the loop is not mistaken for a 0-or-1-trip
guard)."""

from __future__ import annotations

import ast
import builtins

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.pipeline import port_file
from tests.port.acceptance import CORPUS

KERNELS = (
    "reduce/ramp_weighted_taps",
    "reduce/step_decay_rows",
    "reduce/index_bias_cols",
    "reduce/step_weight_runtime_rows",
    "reduce/tap_bias_inclusive",
    "reduce/countdown_ramp_rows",
)
TARGETS = ["nki", "legacy"]


def _port(rel: str, target: str) -> ast.Module:
    path = CORPUS / f"{rel}.cu"
    res = port_file(path, binding=load_binding(path.with_suffix(".toml")), target=target)
    assert res.source is not None, res.diagnostics
    assert res.idiom is not None and res.idiom != "literal", res.idiom
    return ast.parse(res.source)


def _bound(tree: ast.Module) -> set[str]:
    names = set(dir(builtins))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.FunctionDef):
            names.add(n.name)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
    return names


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", KERNELS)
def test_every_name_the_port_reads_is_bound(rel: str, target: str) -> None:
    tree = _port(rel, target)
    loads = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    assert loads <= _bound(tree), loads - _bound(tree)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", KERNELS)
def test_invariant_load_hoisted_out_of_the_step_loop(rel: str, target: str) -> None:
    tree = _port(rel, target)
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For)]
    innermost = [
        lp for lp in loops if not any(o is not lp for o in ast.walk(lp) if isinstance(o, ast.For))
    ]
    assert innermost
    for loop in innermost:
        text = ast.unparse(loop)
        assert "dma_copy" not in text and "nl.load" not in text, text
