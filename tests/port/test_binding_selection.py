"""Which binding a kernel of a multi-kernel file is ported and checked with: a binding applies only
to the kernel it names, a port is written only from a binding that validates, and what concerns
the file's other kernels does not make a port an error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.cli.main import main
from cuda2nki.diagnostics import DiagnosticError

KERNELS = """\
__global__ void scale(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

__global__ void shift(float* out, const float* in, int m) {
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j < m) out[j] = in[j] + 1.0f;
}
"""

SCALE = """\
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

SHIFT_TABLE = """
[kernels.shift.launch]
grid = ["ceil_div(m, 64)"]
block = [64]
[kernels.shift.params]
out = { shape = ["m"], dtype = "float32", role = "out" }
in = { shape = ["m"], dtype = "float32", role = "in" }
m = 300
"""

#: shift laid out by its block's shape (a row per blockIdx.y): with no launch site, no default
#: launch either, so its inferred binding is incomplete
UNLAUNCHED = KERNELS.replace(
    "if (j < m) out[j] = in[j] + 1.0f;",
    "if (j < m) out[blockIdx.y * m + j] = in[blockIdx.y * m + j] + 1.0f;",
)

#: a host launcher: what the inference reads (it finds no scalar values in it)
HOST = """
void launch(float* o, const float* i, int count) {
    shift<<<(count + 63) / 64, 64>>>(o, i, count);
}
"""


def _files(tmp_path: Path, cuda: str, sidecar: str | None, name: str = "two") -> Path:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(cuda)
    if sidecar is not None:
        (tmp_path / f"{name}.toml").write_text(sidecar)
    return cu


def _port(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(["port", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_sidecar_for_another_kernel_is_never_applied(tmp_path: Path, capsys) -> None:
    cu = _files(tmp_path, UNLAUNCHED, SCALE)
    out = tmp_path / "shift.py"
    code, _, err = _port([str(cu), "--kernel", "shift", "-o", str(out)], capsys)
    # shift's binding is inferred (the sidecar binds scale only); with no launch site to read,
    # the inference is incomplete and no port is written
    assert "[C2N0008]" in err and "binds 'scale'" in err
    assert "[C2N2502]" in err
    assert code == 2 and not out.exists()
    # with its launcher in the file, shift's own binding is inferred from it, never scale's
    cu = _files(tmp_path, KERNELS + HOST, SCALE)
    code, _, err = _port([str(cu), "--kernel", "shift", "-o", str(out)], capsys)
    assert "[C2N0008]" in err and code == 0 and out.exists()
    assert "def shift(" in out.read_text()
    # the kernel the sidecar names still gets it
    code, _, err = _port([str(cu), "--kernel", "scale", "-o", str(out)], capsys)
    assert code == 0 and out.exists() and "C2N0008" not in err


def test_an_explicit_binding_for_another_kernel_is_an_error(tmp_path: Path, capsys) -> None:
    cu = _files(tmp_path, KERNELS, None)
    b = tmp_path / "b.toml"
    b.write_text(SCALE)
    out = tmp_path / "shift.py"
    code, _, err = _port(
        [str(cu), "--kernel", "shift", "--binding", str(b), "-o", str(out)], capsys
    )
    assert code == 2 and not out.exists()
    assert re.search(rf"{re.escape(str(b))}:1:1: error: .*'shift'.*binds 'scale' \[C2N0007\]", err)
    b.write_text(
        SCALE + "\n[kernels.other.launch]\ngrid = [1]\nblock = [1]\n[kernels.other.params]\nq = 1\n"
    )
    code, _, err = _port([str(cu), "--kernel", "shift", "--binding", str(b)], capsys)
    assert code == 2 and "binds 'scale', 'other' [C2N0007]" in err


def test_a_multi_kernel_sidecar_binds_each_kernel(tmp_path: Path, capsys) -> None:
    cu = _files(tmp_path, KERNELS, SCALE + SHIFT_TABLE)
    for kernel, launch in (("scale", "ceil_div(n, 128)"), ("shift", "ceil_div(m, 64)")):
        out = tmp_path / f"{kernel}.py"
        code, _, err = _port([str(cu), "--kernel", kernel, "-o", str(out)], capsys)
        assert code == 0, err
        assert f"Launch: grid ({launch})" in out.read_text()
    code, _, err = _port([str(cu)], capsys)  # two kernels bound: which one is asked for
    assert code == 2 and "C2N2504" in err


def test_the_api_refuses_a_binding_object_naming_another_kernel(tmp_path: Path) -> None:
    cu = _files(tmp_path, KERNELS, None)
    scale = api.load_binding(_files(tmp_path, "", SCALE, "b").with_suffix(".toml"))
    with pytest.raises(DiagnosticError) as exc:
        api.port(cu, binding=scale, kernel="shift")
    assert exc.value.diagnostic.code == "C2N0007"
    assert api.port(cu, binding=scale, kernel="scale").source is not None
    both = api.load_bindings(_files(tmp_path, "", SCALE + SHIFT_TABLE, "c").with_suffix(".toml"))
    assert api.port(cu, binding=both, kernel="shift").source is not None
    with pytest.raises(DiagnosticError) as exc:
        api.port(cu, binding=both)  # two kernels, two bindings: which one?
    assert exc.value.diagnostic.code == "C2N2504"


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (("m = 300", ""), "'m' has no value"),  # a size without a value
        (
            (
                'shape = ["m"], dtype = "float32", role = "out"',
                'shape = ["rows"], dtype = "float32", role = "out"',
            ),
            "unknown name 'rows'",
        ),
        (
            ("m = 300", 'm = 300\nz = { shape = ["m"], dtype = "float32", role = "in" }'),
            "'z' is not a parameter of kernel 'shift'",
        ),
    ],
)
def test_no_port_is_written_from_a_binding_that_does_not_validate(
    tmp_path: Path, capsys, change: tuple[str, str], needle: str
) -> None:
    cu = _files(tmp_path, KERNELS, SHIFT_TABLE.replace(*change))
    out = tmp_path / "shift.py"
    code, _, err = _port([str(cu), "--kernel", "shift", "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert "two.toml:2:1: error: invalid binding: kernel 'shift': " in err and needle in err


def test_check_uses_the_binding_of_the_checked_kernel_only(tmp_path: Path) -> None:
    cu = _files(tmp_path, UNLAUNCHED, SCALE)
    port = tmp_path / "port.py"
    port.write_text(api.port(cu, kernel="scale").source)
    with pytest.raises(DiagnosticError) as exc:  # shift: inferred, with no launch site to read
        api.check(cu, port, kernel="shift", seeds=1, static_only=True)
    assert {d.code for d in exc.value.diagnostics} >= {"C2N0008", "C2N2502"}
    with pytest.raises(DiagnosticError) as exc:
        api.check(cu, port, kernel="shift", binding=tmp_path / "two.toml", static_only=True)
    assert exc.value.diagnostic.code == "C2N0007"


BROKEN_NEIGHBOUR = """\
__global__ void good(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 3.0f;
}

__global__ void bad(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = not_declared_anywhere(x[i]);
}
"""


def test_errors_of_other_kernels_are_notes_when_porting_a_healthy_one(
    tmp_path: Path, capsys
) -> None:
    sidecar = SCALE.replace('"scale"', '"good"').replace("a = 2.0\n", "")
    cu = _files(tmp_path, BROKEN_NEIGHBOUR, sidecar)
    code, _, err = _port([str(cu), "--kernel", "good", "-o", str(tmp_path / "good.py")], capsys)
    assert code == 0
    assert "error:" not in err
    assert "note: call to unknown function 'not_declared_anywhere' [C2N1021]" in err
    assert "in kernel 'bad'" in err
    code, _, err = _port([str(cu), "--kernel", "bad"], capsys)  # its own errors stay errors
    assert code == 1 and "error: call to unknown function" in err


def test_run_takes_the_binding_of_the_kernel_it_runs(tmp_path: Path, capsys) -> None:
    cu = _files(tmp_path, KERNELS, SCALE + SHIFT_TABLE.replace("m = 300", "m = 70"))
    npz = tmp_path / "out.npz"
    assert main(["run", str(cu), "--kernel", "shift", "--out", str(npz)]) == 0
    assert "out: float32 (70,)" in capsys.readouterr().out
    (tmp_path / "two.toml").write_text(SCALE)  # binds scale only
    assert main(["run", str(cu), "--kernel", "shift", "--out", str(npz)]) == 2
    assert "for kernel 'shift'" in capsys.readouterr().err
    b = tmp_path / "two.toml"
    assert main(["run", str(cu), "--kernel", "shift", "--binding", str(b), "--out", str(npz)]) == 2
    assert "[C2N0007]" in capsys.readouterr().err
