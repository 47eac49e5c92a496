"""Sizes read from the command line (with a default, or with none: a sensible default and a
note), and launchers called only from another file of the tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.frontend.cmdline import DEFAULT_FLOAT, DEFAULT_INT
from cuda2nki.lift.infer import binding_from_inference, infer_binding

KERNEL = """
#include <cstdlib>
__global__ void shift(float *y, const float *x, float b, int len) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < len) y[i] = x[i] + b;
}
"""

HOST = """
int main(int argc, char **argv) {{
  {decl}
  float *x, *y;
  cudaMalloc(&x, len * sizeof(float));
  cudaMalloc(&y, len * sizeof(float));
  shift<<<(len + 63) / 64, 64>>>(y, x, 1.5f, len);
  return 0;
}}"""

WITH_DEFAULT = {
    "gt-one": "int len = argc > 1 ? atoi(argv[1]) : 700;",
    "ge-two-parens": "int len = (argc >= 2) ? (int)atol(argv[1]) : 700;",
    "reversed": "int len = argc < 2 ? 700 : std::stoi(argv[1]);",
    "strtol": "const int len = argc == 2 ? strtol(argv[1], NULL, 10) : 700;",
    "assigned-later": "int len;\n  len = argc > 1 ? atoi(argv[argc - 1]) : 700;",
}


@pytest.mark.parametrize("case", sorted(WITH_DEFAULT))
def test_command_line_size_takes_its_default(case: str) -> None:
    src = KERNEL + HOST.format(decl=WITH_DEFAULT[case])
    partial, diags = infer_binding(parse_source(src, "cl.cu"), "shift")
    assert partial["params"]["len"] == 700, case
    msg = next(d.message for d in diags if "len = 700" in d.message)
    assert "command line" in msg and "default 700" in msg


NO_DEFAULT = {
    "atoi": "int len = atoi(argv[1]);",
    "if-argc": "int len = 0;\n  if (argc != 2) return 1;\n  len = atoi(argv[1]);",
    "block-if": "int len;\n  if (argc == 2) {\n    len = std::stoul(argv[1]);\n  }",
    "cast": "long len = (long)strtoll(argv[1], nullptr, 0);",
}


@pytest.mark.parametrize("case", sorted(NO_DEFAULT))
def test_command_line_size_without_default_takes_a_sensible_one(case: str) -> None:
    src = KERNEL + HOST.format(decl=NO_DEFAULT[case])
    tu = parse_source(src, "nd.cu")
    partial, diags = infer_binding(tu, "shift")
    notes = " ".join(d.message for d in diags)
    assert f"with no default; {DEFAULT_INT} taken" in notes, (case, notes)
    assert partial["params"]["len"] == DEFAULT_INT
    b, _ = binding_from_inference(tu, "shift")
    assert b is not None


def test_floating_command_line_value_defaults_to_one() -> None:
    host = HOST.format(decl="int len = 512;").replace("1.5f, len", "(float)atof(argv[2]), len")
    partial, diags = infer_binding(parse_source(KERNEL + host, "f.cu"), "shift")
    assert partial["params"]["b"] == DEFAULT_FLOAT
    assert any("atof(argv[2]) read from the command line" in d.message for d in diags)


def test_a_known_condition_still_picks_its_branch() -> None:
    host = HOST.format(decl="const int big = 0;\n  int len = big ? 4096 : 320;")
    partial, _ = infer_binding(parse_source(KERNEL + host, "k.cu"), "shift")
    assert partial["params"]["len"] == 320


LAUNCHER = """
__global__ void {k}(float *out, const float *in, float s, int {n}) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < {n}) out[i] = s * in[i];
}}
void {fn}(float *out, const float *in, float s, int {n}, int bs) {{
  {k}<<<({n} + bs - 1) / bs, bs>>>(out, in, s, {n});
}}
"""

MAIN = """
#include <cstdlib>
#define BS 32
void {fn}(float *out, const float *in, float s, int {n}, int bs);
static void run(int count) {{
  float *a, *b;
  cudaMalloc(&a, count * sizeof(float));
  cudaMalloc(&b, count * sizeof(float));
  {fn}(b, a, 0.25f, count, BS);
}}
int main(int argc, char **argv) {{
  run(argc > 1 ? atoi(argv[1]) : {size});
}}
"""


@pytest.mark.parametrize(
    ("k", "fn", "n", "size", "sub"),
    [
        ("scale_k", "launch_scale", "n", 1000, ""),
        ("mul", "gpuMul", "count", 4096, "host"),
    ],
)
def test_launcher_called_from_another_file(
    tmp_path: Path, k: str, fn: str, n: str, size: int, sub: str
) -> None:
    (tmp_path / "kern.cu").write_text(LAUNCHER.format(k=k, fn=fn, n=n))
    (tmp_path / sub).mkdir(exist_ok=True)
    (tmp_path / sub / "main.cu").write_text(MAIN.format(fn=fn, n=n, size=size))
    text = (tmp_path / "kern.cu").read_text()
    partial, diags = infer_binding(parse_source(text, str(tmp_path / "kern.cu")), k)
    assert partial["launch"]["block"] == [32]
    assert partial["params"]["s"] == 0.25
    assert partial["params"][n] == size
    assert any("main.cu:" in d.message for d in diags)


def test_a_caller_in_the_launchers_own_file_comes_first(tmp_path: Path) -> None:
    own = LAUNCHER.format(k="k1", fn="go", n="n") + (
        "\nint main() { float *a, *b; go(b, a, 2.0f, 640, 64); }\n"
    )
    (tmp_path / "kern.cu").write_text(own)
    (tmp_path / "main.cu").write_text(MAIN.format(fn="go", n="n", size=999))
    partial, _ = infer_binding(parse_source(own, str(tmp_path / "kern.cu")), "k1")
    assert partial["launch"]["block"] == [64] and partial["params"]["n"] == 640


TREE = Path(__file__).parent / "data" / "stepped_tree"


def test_migrate_checks_a_launcher_tree_with_command_line_sizes(tmp_path: Path) -> None:
    """diffuse.cu's launcher rounds its grid down to 16x16 tiles and is called from main.cu with
    sizes read by atoi (no default): migrate infers the whole binding, checks the port at
    multiples of 16 only, and its numbers agree."""
    import shutil

    from cuda2nki.batch.migrate import MigrateOptions, migrate

    src = tmp_path / "src"
    shutil.copytree(TREE, src)
    kernel = src / "diffuse.cu"
    partial, diags = infer_binding(parse_source(kernel.read_text(), str(kernel)), "diffuse")
    assert partial["params"]["k"] == 0.125  # main.cu's default for argv[3]
    assert partial["check"]["multiples"] == {"width": 16, "height": 16}
    assert any("main.cu:18" in d.message and "width = " in d.message for d in diags)
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True, timeout=600))
    (rec,) = [r for r in res.records if r["kernel"] == "diffuse"]
    assert rec["status"] in ("automatic", "literal") and rec["numerics"] == "pass", rec
    assert not rec["missing"]
