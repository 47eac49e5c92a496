"""A file's time limit counts the kernels of the files it includes with quotes that are not
migrated on their own (``#include "kernel1.cpp"``), not only those of its own text."""

from __future__ import annotations

from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, time_limit

_K = "__global__ void {n}(float* p) {{ p[threadIdx.x] = 0.0f; }}\n"


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "parts").mkdir(parents=True)
    (src / "inc").mkdir()
    (src / "main.cu").write_text(
        '#include "parts/first.cpp"\n#include  "second.cc"\n  # include "side.cuh"\n'
        '#include <vector>\n#include "absent.cpp"\nvoid host() {}\n'
    )
    (src / "parts" / "first.cpp").write_text(
        _K.format(n="a1") + _K.format(n="a2") + '#include "../main.cu"\n#include "body.inc"\n'
    )
    (src / "parts" / "body.inc").write_text(_K.format(n="b1"))
    (src / "inc" / "second.cc").write_text(_K.format(n="c1"))
    (src / "side.cuh").write_text(_K.format(n="s1"))  # migrated as a file of its own
    return src


def test_kernels_of_included_sources_count(tmp_path: Path):
    src = _tree(tmp_path)
    opts = MigrateOptions(src, tmp_path / "out", timeout=10.0)
    inc = (str(src / "inc"),)
    # a1, a2, b1 (nested), c1 (through the include path); not s1, not main.cu again
    assert time_limit(opts, src / "main.cu", inc) == 40.0
    assert time_limit(opts, src / "main.cu") == 30.0  # second.cc not found
    assert time_limit(opts, src / "side.cuh") == 10.0


def test_an_included_file_migrated_on_its_own_counts_there(tmp_path: Path):
    src = _tree(tmp_path)
    (src / "parts" / "body.inc").rename(src / "parts" / "body.cu")
    (src / "parts" / "first.cpp").write_text(_K.format(n="a1") + '#include "body.cu"\n')
    opts = MigrateOptions(src, tmp_path / "out", timeout=10.0)
    assert time_limit(opts, src / "main.cu") == 10.0
    only_main = MigrateOptions(src, tmp_path / "out", timeout=10.0, include=("main.cu",))
    # body.cu and side.cuh are not migrated under this glob: their kernels are counted here
    assert time_limit(only_main, src / "main.cu") == 30.0


def test_a_file_without_kernels_gets_one_share(tmp_path: Path):
    (tmp_path / "plain.cu").write_text("void host() {}\n")
    opts = MigrateOptions(tmp_path, tmp_path / "out", timeout=7.0)
    assert time_limit(opts, tmp_path / "plain.cu") == 7.0
    assert time_limit(opts, tmp_path / "missing.cu") == 7.0


def test_a_link_loop_is_counted_as_unreadable(tmp_path: Path):
    (tmp_path / "loop.cu").symlink_to(tmp_path / "loop.cu")
    (tmp_path / "main.cu").write_text('#include "loop.cu"\n' + _K.format(n="m1"))
    opts = MigrateOptions(tmp_path, tmp_path / "out", timeout=5.0)
    assert time_limit(opts, tmp_path / "loop.cu") == 5.0
    assert time_limit(opts, tmp_path / "main.cu") == 5.0
