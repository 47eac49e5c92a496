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


_SELF_CHECKING = """\
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def twice(src):
    dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    nl.store(dst, nl.multiply(nl.load(src), 2.0))
    return dst


if __name__ == "__main__":
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert np.allclose(twice(x), {factor} * x)
"""


def _samples_repo(tmp_path, factor: int) -> str:
    src = tmp_path / "samples"
    (src / "src" / "tutorials" / "twice").mkdir(parents=True)
    text = _SELF_CHECKING.format(factor=factor)
    (src / "src" / "tutorials" / "twice" / "twice_kernel.py").write_text(text)
    run = lambda *a: subprocess.run(["git", *a], cwd=src, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return str(src / ".git")


def test_keys_are_printed_and_seen_keys_are_left_out(tmp_path, capsys):
    """``--keys`` ends a row with its case key; a run given that key in ``--seen`` (counted by
    another run over other revisions) leaves the case out."""
    gitdir = _samples_repo(tmp_path, 2)
    assert pn.main(["--samples", gitdir, "--revs", "HEAD", "--keys", "-v"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if "twice_kernel.py" in ln]
    assert len(rows) == 1 and " matched " in rows[0] and rows[0].endswith("]"), rows
    key = rows[0][rows[0].rindex("[") + 1 : -1]
    assert key.startswith("twice_kernel.py:")
    seen = tmp_path / "seen.txt"
    seen.write_text(f"other:0\n{key}\n")
    assert pn.main(["--samples", gitdir, "--revs", "HEAD", "--seen", str(seen), "-v"]) == 0
    out = capsys.readouterr().out
    assert "twice_kernel.py" not in out and "legacy" not in out
