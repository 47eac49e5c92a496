"""Outputs are written atomically, with the permissions a user expects."""

from __future__ import annotations

import os
import stat

import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fileio import _UMASK, write_atomic


def _mode(p) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_new_file_has_the_usual_permissions(tmp_path) -> None:
    p = tmp_path / "sub" / "port.py"
    write_atomic(p, "x = 1\n")
    assert p.read_text() == "x = 1\n"
    assert _mode(p) == 0o666 & ~_UMASK  # not the temporary file's 0600


def test_rewritten_file_keeps_its_permissions(tmp_path) -> None:
    p = tmp_path / "report.md"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_atomic(p, b"new")
    assert p.read_bytes() == b"new" and _mode(p) == 0o640


def test_failed_write_leaves_no_temporary_file(tmp_path) -> None:
    target = tmp_path / "dir"
    target.mkdir()
    (target / "keep").write_text("")
    with pytest.raises(DiagnosticError) as ei:
        write_atomic(target, "x")  # replacing a directory by a file fails
    assert ei.value.diagnostic.code == "C2N0004"
    assert sorted(q.name for q in tmp_path.iterdir()) == ["dir"]


def test_source_bytes_that_are_not_utf8_read_as_latin1() -> None:
    from cuda2nki.fileio import decode_source

    text = "// résumé: ü\n".encode() + b"// caf\xe9 na\xefve \x93quoted\x94\n" + b"int x;\n"
    got = decode_source(text)
    assert got.splitlines() == ["// résumé: ü", "// café naïve \x93quoted\x94", "int x;"]
    with pytest.raises(UnicodeDecodeError, match="NUL"):
        decode_source(b"\x7fELF\x02\x01\x00\x00int x;")


def test_latin1_source_is_read_but_other_inputs_stay_strict(tmp_path) -> None:
    from cuda2nki.fileio import read_text

    cu = tmp_path / "k.cu"
    cu.write_bytes(b"// \xe9t\xe9\n__global__ void k(float* x) { x[0] = 1.0f; }\n")
    assert read_text(cu, source=True).startswith("// été\n")
    with pytest.raises(DiagnosticError, match="not UTF-8"):
        read_text(cu)
    binary = tmp_path / "b.cu"
    binary.write_bytes(b"\x00\x01\x02")
    with pytest.raises(DiagnosticError, match="not text"):
        read_text(binary, source=True)


def test_a_latin1_commented_kernel_ports(tmp_path) -> None:
    from cuda2nki.frontend import parse_file
    from cuda2nki.pipeline import port_file

    cu = tmp_path / "k.cu"
    cu.write_bytes(
        b"// Copyright \xa9 Universit\xe9\n"
        b"__global__ void twice(const float* a, float* b, int n) {\n"
        b"  int i = blockIdx.x * blockDim.x + threadIdx.x;  // \xab index \xbb\n"
        b"  if (i < n) b[i] = 2.0f * a[i];\n}\n"
        b"void run(const float* a, float* b, int n) { twice<<<(n + 127) / 128, 128>>>(a, b, n); }\n"
    )
    tu = parse_file(cu)
    assert [k.name for k in tu.kernels] == ["twice"] and tu.rejected == {}
    assert tu.kernels[0].body.body[0].loc.line == 3
    assert port_file(cu).source is not None
