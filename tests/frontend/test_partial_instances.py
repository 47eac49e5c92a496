"""Kernel templates launched only from host templates: the integers the launches fix are
instantiated, the type parameters kept (or given with --template)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

KERNEL = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
template <class T, int Block, int Tile>
__global__ void tile_sum(const T* x, T* out) {
    auto blk = cg::this_thread_block();
    auto tile = cg::tiled_partition<Tile>(blk);
    T v = x[blockIdx.x * Block + threadIdx.x];
    for (int o = Tile / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
    if (tile.thread_rank() == 0) out[(blockIdx.x * Block + threadIdx.x) / Tile] = v;
}
"""

HOSTS = {
    "switch-constexpr": """template <class T>
void launch(const T* x, T* out, int threads) {
    constexpr int groups = 2;
    switch (threads) {
    case 64: tile_sum<T, 64, 64 / groups><<<4, 64>>>(x, out); break;
    case 32: tile_sum<T, 32, 32 / groups><<<4, 32>>>(x, out); break;
    }
}
""",
    "if-literals": """template <typename Elem>
void run_all(const Elem* x, Elem* out, bool big) {
    if (big) tile_sum<Elem, 64, 32><<<dim3(4), dim3(64)>>>(x, out);
    else tile_sum<Elem, 32, 16><<<dim3(4), dim3(32)>>>(x, out);
}
""",
    "global-constant": """const int kGroups = 2;
template <class T>
void both(const T* x, T* out, int n) {
    if (n > 1000) tile_sum<T, 64, 64 / kGroups><<<4, 64>>>(x, out);
    else tile_sum<T, 32, 32 / kGroups><<<4, 32>>>(x, out);
}
""",
}


@pytest.mark.parametrize("spelling", sorted(HOSTS))
def test_integers_fixed_by_host_template_launches(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(KERNEL + HOSTS[spelling])
    tu = parse_file(path, templates={"T": "float", "Elem": "float"})
    assert tu.rejected == {}, tu.diagnostics
    names = sorted(k.name for k in tu.kernels)
    assert "tile_sum<float32, 32, 16>" in names, names
    x = np.arange(128, dtype=np.float32)
    got = run_kernel(
        tu,
        "tile_sum<float32, 32, 16>",
        grid=(4,),
        block=(32,),
        args={"x": x, "out": np.zeros(8, np.float32)},
    )["out"]
    np.testing.assert_allclose(got, x.reshape(8, 16).sum(1))


def test_the_type_parameter_stays_a_parameter_without_a_value(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(KERNEL + HOSTS["switch-constexpr"])
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    assert sorted(k.name for k in tu.kernels) == ["tile_sum<T, 32, 16>", "tile_sum<T, 64, 32>"]
    assert any(d.code == "C2N1023" for d in tu.diagnostics)


def test_one_set_of_integers_keeps_the_plain_name(tmp_path: Path) -> None:
    host = "template <class T>\nvoid one(const T* x, T* out) { tile_sum<T, 32, 16><<<4, 32>>>(x, out); }\n"
    path = tmp_path / "k.cu"
    path.write_text(KERNEL + host)
    tu = parse_file(path, templates={"T": "int"})
    assert tu.rejected == {}, tu.diagnostics
    assert [k.name for k in tu.kernels] == ["tile_sum"]
    x = np.arange(128, dtype=np.int32)
    got = run_kernel(
        tu, "tile_sum", grid=(4,), block=(32,), args={"x": x, "out": np.zeros(8, np.int32)}
    )["out"]
    np.testing.assert_array_equal(got, x.reshape(8, 16).sum(1))


def test_without_a_launch_the_tile_size_is_refused_clearly(tmp_path: Path) -> None:
    from cuda2nki.frontend.driver import lower_source

    tu = lower_source(KERNEL, str(tmp_path / "k.cu"))  # as written: nothing assumed
    d = tu.rejected["tile_sum"][0]
    assert d.code == "C2N1029" and d.loc.line == 6 and "Tile" in d.message


def test_without_a_launch_a_tile_of_a_warp_is_assumed(tmp_path: Path) -> None:
    """A tile of 128 threads is refused, so the integers are assumed 32 (a warp)."""
    path = tmp_path / "k.cu"
    path.write_text(KERNEL)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    assert k.template_args[1:] == (("Block", 32), ("Tile", 32))
    said = [d.message for d in tu.diagnostics if d.code == "C2N2100"]
    assert len(said) == 1 and "Block=32, Tile=32" in said[0], said
