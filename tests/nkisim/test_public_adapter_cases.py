"""Which public files the adapter (``bench.public_nki``) runs as cases, and how it exports a
revision of a large repository."""

from __future__ import annotations

import subprocess

import pytest

from bench import public_nki as pn

MAIN = (
    "import numpy as np\nimport neuronxcc.nki as nki\n{imports}\n"
    "if __name__ == '__main__':\n    assert np.allclose(run(), 1)\n"
)


@pytest.mark.parametrize(
    "imports, helper, case",
    [
        ("from kernels import *", "import numpy as np\n", True),
        ("from kernels import *", "import numpy as np\nimport torch\n", False),
        ("import kernels", "from jax import numpy as jnp\n", False),
        ("from kernels import run", "import torch_xla_helpers\n", True),  # not torch itself
        ("import numpy", "import torch\n", True),  # not a module of its folder
    ],
)
def test_a_tutorial_that_needs_torch_through_its_folder_is_no_case(tmp_path, imports, helper, case):
    (tmp_path / "kernels.py").write_text(helper)
    f = tmp_path / "test_tutorial.py"
    text = MAIN.format(imports=imports)
    f.write_text(text)
    assert pn._is_tutorial_case(f, text) is case


def _repo(tmp_path):
    git = tmp_path / "repo"
    src = tmp_path / "work"
    (src / "nki" / "test").mkdir(parents=True)
    (src / "nki" / "test" / "test_a.py").write_text("x = 1\n")
    (src / "other.txt").write_text("big\n")
    run = lambda *a: subprocess.run(["git", *a], cwd=src, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return str(src / ".git"), git


def test_an_sdk_revision_exports_only_its_nki_folders(tmp_path):
    gitdir, _ = _repo(tmp_path)
    dest = tmp_path / "out"
    pn._export(gitdir, "HEAD", dest, pn.SDK_PATHS)
    assert (dest / "nki" / "test" / "test_a.py").is_file()
    assert not (dest / "other.txt").exists() and not (dest / "general").exists()
    whole = tmp_path / "whole"
    pn._export(gitdir, "HEAD", whole)
    assert (whole / "other.txt").is_file()
