"""Binding files that bind several kernels: ``[kernels.NAME]`` tables, the single-kernel format, and
a binding applied only to the kernel it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict, binding_problems, load_binding, load_bindings
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import parse_source

TWO_KERNELS = """\
__global__ void scale(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
__global__ void shift(float* out, const float* in, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) out[i] = in[i] + 1.0f;
}
"""

MULTI = """\
# two kernels of one file
[kernels.scale]
description = "y = a * x"
[kernels.scale.launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[kernels.scale.params]
y = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
a = 2.0
n = 1000

[kernels."shift"]
launch = { grid = ["ceil_div(m, 64)"], block = [64] }
params = { out = { shape = ["m"], dtype = "float32", role = "out" }, in = { shape = ["m"], dtype = "float32", role = "in" }, m = 300 }
check = { shapes = [{ m = 129 }] }
"""

SINGLE = """\
kernel = "scale"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
y = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
a = 2.0
n = 1000
"""


def _write(tmp_path: Path, text: str, name: str = "k.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_kernels_tables_bind_each_kernel_by_name(tmp_path: Path) -> None:
    bf = load_bindings(_write(tmp_path, MULTI))
    assert bf.kernels == ("scale", "shift")
    scale, shift = bf.for_kernel("scale"), bf.for_kernel("shift")
    assert scale is not None and shift is not None
    assert scale.kernel == "scale" and scale.block == (128,) and scale.defaults["a"] == 2.0
    assert scale.meta["description"] == "y = a * x"
    assert shift.kernel == "shift" and shift.grid == ("ceil_div(m, 64)",)
    assert shift.test_points()[1]["m"] == 129
    assert (scale.line, shift.line) == (2, 13)  # where each table starts
    assert bf.only() is None
    assert bf.for_kernel("other") is None


def test_single_kernel_sidecar_binds_the_kernel_it_names(tmp_path: Path) -> None:
    bf = load_bindings(_write(tmp_path, SINGLE))
    assert bf.kernels == ("scale",)
    assert bf.for_kernel("scale") is bf.only()
    assert bf.for_kernel("shift") is None
    tu = parse_source(TWO_KERNELS, "two.cu")
    assert bf.for_kernel("shift", tu) is None
    assert load_binding(tmp_path / "k.toml").kernel == "scale"


def test_top_level_binding_and_tables_together(tmp_path: Path) -> None:
    text = SINGLE + MULTI.split('[kernels."shift"]')[1].join(['[kernels."shift"]', ""])
    bf = load_bindings(_write(tmp_path, text))
    assert bf.kernels == ("scale", "shift")


def test_unnamed_binding_applies_to_a_file_with_one_kernel_only(tmp_path: Path) -> None:
    bf = load_bindings(_write(tmp_path, SINGLE.replace('kernel = "scale"\n', "")))
    one = parse_source(TWO_KERNELS.split("__global__ void shift")[0], "one.cu")
    two = parse_source(TWO_KERNELS, "two.cu")
    assert bf.for_kernel("scale", one) is not None
    assert bf.for_kernel("scale", two) is None  # which kernel it is for, it does not say
    assert bf.for_kernel("scale", two, explicit=True) is not None  # given for this kernel


def test_load_binding_for_another_kernel_is_c2n0007(tmp_path: Path) -> None:
    path = _write(tmp_path, MULTI)
    with pytest.raises(DiagnosticError) as exc:
        load_binding(path, "missing")
    d = exc.value.diagnostic
    assert d.code == "C2N0007" and d.loc.file == str(path) and d.loc.line >= 1
    assert "'scale', 'shift'" in d.message and "'missing'" in d.message
    with pytest.raises(DiagnosticError) as exc:
        load_binding(path)  # several kernels: which one?
    assert exc.value.diagnostic.code == "C2N0002" and "scale" in exc.value.diagnostic.message


@pytest.mark.parametrize(
    ("text", "needle", "line"),
    [
        (
            MULTI.replace("[kernels.scale]\n", '[kernels.scale]\nkernel = "shift"\n'),
            "table's name is the kernel",
            1,
        ),
        (SINGLE.replace('kernel = "scale"\n', "") + "[kernels.shift]\n", "name it", 1),
        ("[kernels]\nscale = 3\n", "one table per kernel", 1),
        (SINGLE + "[kernels.scale.launch]\ngrid = [1]\nblock = [1]\n", "bound twice", 1),
        (MULTI.replace("block = [128]", "block = [128, 1, 1, 1]"), "launch.block", 6),
        (
            MULTI.replace(
                'x = { shape = ["n"], dtype = "float32"', 'x = { shape = ["n"], dtype = "f"'
            ),
            "'x'",
            9,
        ),
        (MULTI.replace('role = "in" }, m = 300', 'role = "sideways" }, m = 300'), "'in'", 15),
        (MULTI.replace("a = 2.0", 'a = "two"'), "'a'", 10),
        (SINGLE.replace('"in" }', '"inn" }'), "'x'", 7),
        (SINGLE.replace("block = [128]", "block = []"), "launch.block", 4),
        (MULTI.replace("{ m = 129 }", "{ m = true }"), "'m'", 16),
        (MULTI.replace("m = 300 }", "m = 300, p = {} }"), "'p'", 15),
    ],
)
def test_bad_binding_files_are_c2n0003(tmp_path: Path, text: str, needle: str, line: int) -> None:
    with pytest.raises(DiagnosticError) as exc:
        load_bindings(_write(tmp_path, text))
    d = exc.value.diagnostic
    assert d.code == "C2N0003" and needle in d.message, d.message
    assert d.loc.line == line


def _problems(params: dict, kernel_params: list[tuple[str, bool]], grid: str = "n") -> list[str]:
    b = binding_from_dict({"launch": {"grid": [grid], "block": [32]}, "params": params})
    return binding_problems(b, "k", kernel_params)


def test_a_binding_validates_against_the_kernel_parameters() -> None:
    y = {"shape": ["n"], "dtype": "float32", "role": "out"}
    ok = _problems({"y": y, "n": 64}, [("y", True), ("n", False)])
    assert ok == []
    # a scalar without a value: a port would take it as an argument nobody passes
    assert (
        "'a' has no value"
        in _problems({"y": y, "n": 64}, [("y", True), ("a", False), ("n", False)])[0]
    )
    # an entry the kernel does not have (a binding written for another kernel)
    got = _problems({"y": y, "n": 64, "z": y}, [("y", True), ("n", False)])
    assert got == ["'z' is not a parameter of kernel 'k' (it has y, n)"]
    assert "is a pointer" in _problems({"y": 3, "n": 64}, [("y", True), ("n", False)])[0]
    assert "is a scalar" in _problems({"y": y, "n": y}, [("y", True), ("n", False)])[0]
    # expressions that do not evaluate: the 'unknown name' of a binding made for other names
    got = _problems({"y": {**y, "shape": ["m"]}, "n": 64}, [("y", True), ("n", False)])
    assert got == ["unknown name 'm' in 'm'"]
    # a scalar the kernel does not take is a size its shapes use (a number of bins)
    bins = {"shape": ["nb"], "dtype": "int32", "role": "inout"}
    assert _problems({"y": bins, "n": 64, "nb": 10}, [("y", True), ("n", False)]) == []
    # a pointer it leaves out is the lifter's to report (with the construct using it)
    assert _problems({"n": 64}, [("y", True), ("n", False)]) == []


def test_a_template_binding_binds_its_instances_unless_one_has_its_own(tmp_path: Path) -> None:
    table = "[kernels.{}]\nlaunch = {{ grid = [1], block = [{}] }}\nparams = {{ n = 1 }}\n"
    text = table.format("reduce", 128) + table.format('"reduce<256, float32>"', 256)
    bf = load_bindings(_write(tmp_path, text))
    assert bf.for_kernel("reduce<256, float32>").block == (256,)  # its own entry
    assert bf.for_kernel("reduce<256,float32>").block == (256,)  # spaces are free
    assert bf.for_kernel("reduce<128, float32>").block == (128,)  # the template's
    assert bf.for_kernel("reduce").block == (128,)
    assert bf.for_kernel("reducer<128>") is None and bf.for_kernel("other") is None
