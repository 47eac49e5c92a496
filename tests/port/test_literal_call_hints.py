"""Compiler hints in literal ports are the values they wrap (``__builtin_assume_aligned`` of a
pointer, ``__builtin_expect`` of a condition or a value); calls with no counterpart in a port
(the cycle counter, a trap, a graph's conditional node) are refused with C2N2301 saying what
they do, at their line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, run_against_simt, tensor_param

TARGETS = ["nki", "legacy"]

#: kernel bodies (``i`` is the global thread index)
HINTED = {
    "aligned_pointer": "    const float* xa = (const float*)__builtin_assume_aligned(x, 16);\n"
    "    if (i < n) y[i] = xa[i] * 2.0f;\n",
    "aligned_offset_cast": "    const float* row = reinterpret_cast<const float*>(\n"
    "        __builtin_assume_aligned(x + blockIdx.x * blockDim.x, 16, 0));\n"
    "    if (i < n) y[i] = row[threadIdx.x] - 1.0f;\n",
    "expected_guard": "    if (__builtin_expect(i < n, 1)) y[i] = x[i] + 3.0f;\n",
    "expected_data_value": "    if (i >= n) return;\n"
    "    float v = x[i];\n"
    "    long s = __builtin_expect((long)(v > 0.0f), 0L);\n"
    "    y[i] = s ? v : -v;\n",
}

#: call -> what its refusal says
REFUSED = {
    "clock64()": "cycle counter",
    "clock()": "cycle counter",
}


def _cu(tmp: Path, name: str, body: str) -> Path:
    cu = tmp / f"{name}.cu"
    cu.write_text(
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n"
    )
    return cu


def _binding(cu: Path):
    from cuda2nki.binding import binding_from_dict

    params = {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 300}
    bdict = grid_binding(["ceil_div(n, 128)"], params, [{"n": 300}, {"n": 100}], block=128)
    return binding_from_dict({"kernel": "k", **bdict}, path=str(cu))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(HINTED))
def test_hints_are_their_values(name, target, tmp_path) -> None:
    from cuda2nki.pipeline import port_file

    cu = _cu(tmp_path, name, HINTED[name])
    binding = _binding(cu)
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    points = binding.test_points()
    run = run_against_simt(res, binding, port, points=points, rtol=0.0, atol=0.0)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("call", sorted(REFUSED))
def test_calls_without_counterpart_are_refused_saying_why(call, tmp_path) -> None:
    from cuda2nki.pipeline import port_file

    body = f"    long t0 = {call};\n    while ({call} - t0 < (long)n) {{ }}\n"
    body += "    if (i < n) y[i] = x[i];\n"
    cu = _cu(tmp_path, "timed", body)
    res = port_file(cu, binding=_binding(cu), target="nki", lowering="literal")
    assert res.source is None
    why = [d for d in res.diagnostics if d.code == "C2N2301"]
    assert why and REFUSED[call] in why[0].message, [d.render() for d in res.diagnostics]
    assert why[0].loc.line == 3


def test_a_trap_is_refused_saying_why(tmp_path) -> None:
    from cuda2nki.pipeline import port_file

    body = "    if (i < n && x[i] != x[i]) __trap();\n    if (i < n) y[i] = x[i];\n"
    cu = _cu(tmp_path, "trapped", body)
    res = port_file(cu, binding=_binding(cu), target="nki", lowering="literal")
    assert res.source is None
    why = [d.message for d in res.diagnostics if d.code == "C2N2301"]
    assert why and "aborts the launch" in why[0], [d.render() for d in res.diagnostics]
