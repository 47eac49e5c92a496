"""The wheel carries grammars/, templates/ and report/templates/ and works outside the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import importlib.resources as r, sys
root = r.files("cuda2nki")
assert "site-packages" in str(root), root
grammars = sorted(p.name for p in (root / "grammars").iterdir() if p.name.endswith(".lark"))
templates = sorted(p.name for p in (root / "templates").rglob("*.j2"))
assert grammars, "no grammar in the wheel"
assert templates, "no template in the wheel"
assert (root / "rules/examples/inputs/basic/vector_add.cu").is_file(), "no example inputs"
from cuda2nki.ir import parser  # loads the lark grammar from the package data
from cuda2nki.codegen import render as T  # loads the jinja2 templates from the package data
parser.grammar()
T.environment().list_templates()
from cuda2nki.report import pages  # the HTML report templates
assert {"review.html.j2", "migrate.html.j2", "charts.html.j2"} <= set(
    pages.environment().list_templates()
), "no report template in the wheel"
print("OK", len(grammars), len(templates))
"""


@pytest.mark.skipif(os.environ.get("CUDA2NKI_SKIP_WHEEL") == "1", reason="wheel test disabled")
def test_wheel_installs_and_loads_package_data(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        cwd=tmp_path,
        capture_output=True,
    )
    wheel = next(dist.glob("cuda2nki-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # install the wheel's files without network: unpack it into the fresh venv's site-packages
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, str(wheel)],
        check=True,
        capture_output=True,
    )
    # dependencies come from the test environment's site-packages, appended after the fresh venv's
    deps = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PYTHONPATH": deps}
    out = subprocess.run([py, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("OK")
    cli = subprocess.run(
        [py, "-m", "cuda2nki.cli.main", "rules"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0 and "C2N0001" in cli.stdout, cli.stderr
    kernel = ROOT / "corpus" / "basic" / "vector_add.cu"
    port = subprocess.run(
        [py, "-m", "cuda2nki.cli.main", "port", str(kernel)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert port.returncode in (0, 1), port.stderr  # 1: ported with a literal lowering
    assert "import nki" in port.stdout and "def vector_add" in port.stdout, port.stderr
