"""Pointer parameters tested against null are optional: the port takes such an input as
``name=None`` and, traced without it, computes what the CUDA kernel computes with a null
pointer; with it, what the kernel computes with the pointer.  Spellings: ``p != NULL`` in a
ternary, ``if (p)``, ``!p``, ``p == nullptr``, a test joined with ``&&``; null-tested outputs are
always produced."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import generate_inputs, load_binding
from cuda2nki.codegen.spell import py_name
from cuda2nki.frontend import parse_file
from cuda2nki.frontend.presence import StillUsed, null_tested, specialise
from cuda2nki.nkisim.importer import load_kernel
from cuda2nki.nkisim.kernel import simulate_kernel
from cuda2nki.pipeline import port_file
from cuda2nki.simt.runner import run_kernel
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

#: corpus kernel -> (optional inputs, null-tested outputs)
FORMS = {
    "optional/bias_add_nullable": (("bias",), ()),
    "optional/scale_shift_optional": (("scale", "shift"), ()),
    "optional/layernorm_nullable": (("bias",), ("mean", "rstd")),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_present_inputs_match_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom not in (None, "literal")


def _subsets(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [
        tuple(n for k, n in enumerate(names) if mask >> k & 1) for mask in range(1, 1 << len(names))
    ]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_absent_inputs_match_the_null_pointer_run(rel, target, tmp_path) -> None:
    path = CORPUS / f"{rel}.cu"
    binding = load_binding(path.with_suffix(".toml"))
    res = port_file(path, binding=binding, target=target)
    assert res.source is not None and not res.literal
    optional, outputs = FORMS[rel]
    said = {d.message.split("'")[1] for d in res.diagnostics if d.code == "C2N2024"}
    kept = {d.message.split("'")[1] for d in res.diagnostics if d.code == "C2N2025"}
    assert said == set(optional) and kept == set(outputs)
    port = tmp_path / "port.py"
    port.write_text(res.source)
    fn = load_kernel(port, py_name(res.kernel))
    for point in binding.test_points()[:2]:
        resolved = binding.resolve(point)
        inputs = generate_inputs(resolved, seed=5)
        for absent in _subsets(optional):
            args = {**inputs, **resolved.scalars, **dict.fromkeys(absent)}
            ref = run_kernel(
                res.tu, res.kernel, grid=resolved.grid, block=resolved.block, args=args
            )
            given = {
                t.name: inputs[t.name]
                for t in binding.tensors
                if t.role != "out" and t.name not in absent
            }
            sim = simulate_kernel(fn, given)
            outs = sim.outputs if isinstance(sim.outputs, tuple) else (sim.outputs,)
            names = [t.name for t in binding.tensors if t.role != "in"]
            for name, got in zip(names, outs, strict=True):
                want = np.asarray(ref[name], np.float64)
                np.testing.assert_allclose(
                    np.asarray(got, np.float64).reshape(want.shape), want, rtol=1e-4, atol=1e-5
                )


SPELLINGS = {
    "ne_null": "y[i] = x[i] + ((b != NULL) ? b[i] : 0.0f);",
    "eq_nullptr": "y[i] = (b == nullptr) ? x[i] : x[i] * b[i];",
    "bare_if": "float v = x[i]; if (b) v -= b[i]; y[i] = v;",
    "not_if_else": "if (!b) y[i] = x[i]; else y[i] = b[i];",
    "null_first": "y[i] = x[i] + (0 != b ? b[i] : 1.0f);",
    "joined": "float v = x[i]; if (b != NULL && i > 0) v += b[i - 1]; y[i] = v;",
}


def _source(stmt: str) -> str:
    return (
        "__global__ void k(const float* x, const float* b, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) {{ {stmt} }}\n"
        "}\n"
    )


def _parse(tmp_path, src: str):
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    return parse_file(cu).function("k")


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_every_spelling_is_a_null_test_decided_both_ways(name, tmp_path) -> None:
    from cuda2nki.frontend.visit import walk

    fn = _parse(tmp_path, _source(SPELLINGS[name]))
    assert null_tested(fn) == ("b",)
    without = specialise(fn, (), ("b",))
    assert [p.name for p in without.params] == ["x", "y", "n"]
    assert not any(getattr(n, "name", None) == "b" for n in walk(without.body))
    with_b = specialise(fn, ("b",), ())
    assert [p.name for p in with_b.params] == ["x", "b", "y", "n"]


def test_a_pointer_used_outside_its_test_cannot_be_left_out(tmp_path) -> None:
    fn = _parse(tmp_path, _source("y[i] = b[i] * (b ? 2.0f : 1.0f);"))
    assert null_tested(fn) == ("b",)
    with pytest.raises(StillUsed):
        specialise(fn, (), ("b",))


def test_untested_pointers_are_not_optional(tmp_path) -> None:
    fn = _parse(tmp_path, _source("y[i] = x[i] + b[i];"))
    assert null_tested(fn) == ()
