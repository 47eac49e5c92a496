"""`cuda2nki parse`: text and JSON output, exit codes, -D/-I/--template."""

from __future__ import annotations

import json

from cuda2nki.cli.main import main

SRC = """\
#include <cuda_runtime.h>
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) fill(float* out, float v, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) out[i] = v * SCALE;
}
void go(float* o, int n) { fill<256><<<(n + 255) / 256, 256>>>(o, 1.0f, n); }
"""


def test_text_output_and_exit_codes(tmp_path, capsys):
    f = tmp_path / "k.cu"
    f.write_text(SRC)
    assert main(["parse", str(f), "-D", "SCALE=2.0f"]) == 0
    out = capsys.readouterr().out
    assert "fill(float32* out, float32 v, int32 n)" in out and "<BLOCK=256>" in out
    assert "__launch_bounds__(256)" in out and "fill<256><<<((n + 255) / 256), (256)>>>" in out
    assert main(["parse", str(f)]) == 1  # SCALE undefined: the kernel is rejected
    err = capsys.readouterr().err
    assert f"{f}:5:29: error: use of undeclared identifier 'SCALE' [C2N1020]" in err


def test_json_output_is_stable(tmp_path, capsys):
    f = tmp_path / "k.cu"
    f.write_text(SRC)
    assert main(["parse", str(f), "--format", "json", "-D", "SCALE=2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {
        "file",
        "kernels",
        "device_functions",
        "globals",
        "launch_sites",
        "rejected",
        "diagnostics",
    }
    (k,) = doc["kernels"]
    assert k["name"] == "fill" and k["template_args"] == {"BLOCK": 256}
    assert k["params"] == [
        {"name": "out", "type": "float32*"},
        {"name": "v", "type": "float32"},
        {"name": "n", "type": "int32"},
    ]
    assert k["launch_bounds"] == [256]
    (s,) = doc["launch_sites"]
    assert s["kernel"] == "fill" and s["grid_text"] == "(n + 255) / 256" and s["block"] == ["256"]


def test_template_option_and_ast_dump(tmp_path, capsys):
    f = tmp_path / "k.cu"
    f.write_text(SRC.split("void go")[0])
    assert main(["parse", str(f), "-D", "SCALE=1", "--template", "BLOCK=64", "--emit", "ast"]) == 0
    out = capsys.readouterr().out
    assert "Function name='fill' kind='global'" in out and "BLOCK=64" in out
    assert "Builtin ty=uint32 name='threadIdx' dim='x' @4:" in out


def test_input_errors_exit_2(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "missing.cu")]) == 2
    assert "C2N0001" in capsys.readouterr().err
    f = tmp_path / "k.cu"
    f.write_text(SRC)
    assert main(["parse", str(f), "--template", "BLOCK"]) == 2
    assert "C2N0002" in capsys.readouterr().err
