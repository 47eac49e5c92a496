"""``check`` of a kernel whose ``assert`` on the data fails on generated inputs: the port has no
assertions, so it is compared with the kernel compiled with NDEBUG, with a note (C2N4031), not
stopped with C2N1513.  ``__trap()`` is not compiled out and still stops the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fidelity.check import check
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.noassert import has_asserts, without_asserts
from cuda2nki.pipeline import port_file

_BIND = {
    "kernel": "k",
    "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
    "params": {
        "a": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "y": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 300,
    },
}

_HEAD = "__global__ void k(const float* a, float* y, int n) {\n"
_IDX = "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"

ASSERTING = {
    "first_thread_checks_data": _HEAD
    + _IDX
    + "    if (i == 0)\n        assert(a[0] == 0.f);\n"
    + "    if (i < n) y[i] = 2.f * a[i];\n}\n",
    "every_thread_in_braces": _HEAD
    + _IDX
    + "    if (i < n) {\n        assert(a[i] >= 0.0f);\n        y[i] = a[i] + 1.f;\n    }\n}\n",
    "in_a_device_function": "__device__ float twice(float v) {\n    assert(v > 100.f);\n"
    "    return v * 2.f;\n}\n" + _HEAD + _IDX + "    if (i < n) y[i] = twice(a[i]);\n}\n",
}


def _ported(tmp_path: Path, name: str, src: str) -> tuple[Path, Path, object]:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict(_BIND, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_port.py"
    port.write_text(res.source)
    return cu, port, binding


@pytest.mark.parametrize("name", sorted(ASSERTING))
def test_a_failing_data_assert_is_compared_as_ndebug(tmp_path: Path, name: str) -> None:
    cu, port, binding = _ported(tmp_path, name, ASSERTING[name])
    rep = check(cu, port, binding=binding, seeds=2, extra_points=False, timeout=120)
    assert rep.numerics_outcome == "pass", rep.numerics
    notes = [d for d in rep.findings if d.code == "C2N4031"]
    assert len(notes) == 1, [d.message for d in rep.findings]
    assert Path(notes[0].loc.file).name == cu.name
    assert "assert" in ASSERTING[name].splitlines()[notes[0].loc.line - 1]


def test_a_trap_still_stops_the_check(tmp_path: Path) -> None:
    src = ASSERTING["first_thread_checks_data"]
    _, port, _ = _ported(tmp_path, "asserting", src)
    cu = tmp_path / "trap.cu"  # the same kernel, with a trap that is not compiled out
    cu.write_text(src.replace("assert(a[0] == 0.f);", "if (a[0] != 0.f) __trap();"))
    binding = binding_from_dict(_BIND, path=str(cu))
    with pytest.raises(DiagnosticError) as err:
        check(cu, port, binding=binding, seeds=2, extra_points=False, timeout=120)
    assert any(d.code == "C2N1513" for d in err.value.diagnostics)


def test_without_asserts_removes_only_assert_statements() -> None:
    tu = parse_source(ASSERTING["in_a_device_function"], "d.cu")
    assert has_asserts(tu)
    bare = without_asserts(tu)
    assert not has_asserts(bare)
    assert without_asserts(bare) is bare
    assert [f.name for f in bare.functions] == [f.name for f in tu.functions]
    clean = parse_source(_HEAD + _IDX + "    if (i < n) y[i] = a[i];\n}\n", "c.cu")
    assert not has_asserts(clean) and without_asserts(clean) is clean
