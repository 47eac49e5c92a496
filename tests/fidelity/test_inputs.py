"""Inputs that find bugs: five distributions with special values, and test points with ragged
tails, several tiles, a contraction longer than 128 and a size-1 edge (issue 5 §3)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.binding import load_binding
from cuda2nki.fidelity import inputs as fi
from cuda2nki.fidelity.inputs import DISTRIBUTIONS, make_inputs

ROOT = Path(__file__).resolve().parents[2]

MATMUL = """\
kernel = "mm"
[launch]
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
[params]
A = {{ shape = ["M", "K"], dtype = "{dtype}", role = "in" }}
B = {{ shape = ["K", "N"], dtype = "{dtype}", role = "in" }}
C = {{ shape = ["M", "N"], dtype = "float32", role = "out" }}
M = 64
N = 64
K = 64
"""


def _binding(tmp_path: Path, dtype: str = "float32"):
    p = tmp_path / "mm.toml"
    p.write_text(MATMUL.format(dtype=dtype))
    return load_binding(p)


def test_points_cover_tails_tiles_long_contractions_and_size_one(tmp_path: Path) -> None:
    pts = [p.values for p in fi.test_points(_binding(tmp_path))]
    assert pts[0] == {"M": 64, "N": 64, "K": 64}
    assert any(p["M"] % 128 and p["N"] % 128 and p["N"] % 512 for p in pts)  # ragged tails
    assert any(p["M"] > 128 for p in pts) and any(p["N"] > 512 for p in pts)  # several tiles
    assert any(p["K"] > 128 for p in pts)  # K > 128: the contraction spans partition tiles
    assert any(1 in p.values() for p in pts)  # a size-1 edge


def test_binding_points_that_already_cover_a_case_are_not_repeated() -> None:
    b = load_binding(ROOT / "corpus/linalg/matmul_naive.toml")  # has K = 130 and K = 200
    pts = fi.test_points(b)
    assert not any(p.generated and p.values["K"] > 128 for p in pts)


def test_five_seeds_draw_five_distributions_with_special_values(tmp_path: Path) -> None:
    r = _binding(tmp_path).resolve({})
    assert DISTRIBUTIONS == ("normal", "special", "uniform", "heavy", "normal2")
    sets = [make_inputs(r, s) for s in range(5)]
    uniform = sets[2]["A"]
    assert uniform.min() >= -1 and uniform.max() <= 1 and uniform.min() < -0.5
    heavy = sets[3]["A"]
    assert np.abs(heavy).max() > 4 * np.abs(sets[0]["A"]).std()  # Student t(3) tails
    special = sets[1]["A"]
    assert (special == 0).any() and np.signbit(special[special == 0]).any()  # -0.0
    assert np.abs(special).max() >= 1e6  # large magnitudes
    tiny = np.abs(special[special != 0]).min()
    assert tiny < np.finfo(np.float32).tiny  # fp32 subnormals
    assert not np.array_equal(sets[0]["A"], sets[4]["A"])  # normal again, another stream


def test_special_values_respect_a_narrow_dtype(tmp_path: Path) -> None:
    r = _binding(tmp_path, "bfloat16").resolve({})
    a = make_inputs(r, 1)["A"]
    assert a.dtype == ml_dtypes.bfloat16
    assert np.isfinite(a.astype(np.float32)).all()


MAP = """\
kernel = "scale"
[launch]
grid = ["ceil_div(96, 16)", "ceil_div(M, 16)"]
block = [16, 16]
[params]
x = { shape = ["M", 96], dtype = "float32", role = "in" }
y = { shape = ["M", 96], dtype = "float32", role = "out" }
M = 64
"""


def test_the_multi_tile_point_has_two_full_tiles_and_a_tail(tmp_path: Path) -> None:
    p = tmp_path / "scale.toml"
    p.write_text(MAP)
    pts = [q.values for q in fi.test_points(load_binding(p)) if q.values["M"] > 128]
    assert pts == [{"M": 2 * 128 + 2}]
    # a matmul's work is M x N x K: a 64-long contraction at 258 x 1032 is within the bound
    mm = [q.values for q in fi.test_points(_binding(tmp_path)) if q.values["M"] > 128]
    assert mm == [{"M": 2 * 128 + 2, "N": 2 * 512 + 8, "K": 64}]
    # over the work bound (K = 256 at 258 x 1032), one full tile and a tail
    p = tmp_path / "mm256.toml"
    p.write_text(MATMUL.format(dtype="float32").replace("K = 64", "K = 256"))
    mm = [q.values for q in fi.test_points(load_binding(p)) if q.values["M"] > 128]
    assert mm == [{"M": 128 + 2, "N": 512 + 8, "K": 256}]


def test_normalisations_meet_constant_and_low_variance_rows(tmp_path: Path) -> None:
    rows = fi.degenerate_rows(np.random.default_rng(0).standard_normal((8, 16)))
    assert (rows[1] == rows[1, 0]).all() and (rows[5] == rows[5, 0]).all()  # constant rows
    assert rows[3].std() < 1e-2 and rows[0].std() > 0.1  # a low-variance row, an ordinary one
    assert fi.degenerate_rows(np.arange(4.0)).tolist() == [0.0, 1.0, 2.0, 3.0]  # 1-D: unchanged


ROWS = """\
kernel = "rows"
[launch]
grid = ["R"]
block = [128]
[params]
x = {{ shape = ["R", "C"], dtype = "float32", role = "in" }}
y = {{ shape = ["R", "C"], dtype = "float32", role = "out" }}
R = 64
C = 64
[[check.shapes]]
R = {r}
C = {c}
"""


def test_two_full_tiles_and_a_tail_on_every_tiled_axis(tmp_path: Path) -> None:
    """One full tile and a tail (129 rows, 600 columns) leaves a middle tile's path untried: a
    point with two full tiles and a tail on both axes is added, then only on the axes that lack
    one; none where every axis has one."""
    p = tmp_path / "rows.toml"
    p.write_text(ROWS.format(r=129, c=600))
    pts = fi.test_points(load_binding(p))
    assert any(q.generated and q.values == {"R": 258, "C": 1032} for q in pts)
    p.write_text(ROWS.format(r=300, c=600))  # rows are covered; columns are not
    got = [q.values for q in fi.test_points(load_binding(p)) if q.generated and q.values["C"] > 600]
    assert got == [{"R": 64, "C": 1032}]
    p.write_text(ROWS.format(r=300, c=1100))
    assert not [q for q in fi.test_points(load_binding(p)) if q.generated and q.values["R"] > 64]


@pytest.mark.parametrize(
    ("out_shape", "edge"),
    [(["n - 4"], 5), (["n - 8"], 9), (["(n - 2) / 2"], 4), (["n"], 1)],
)
def test_the_size_one_edge_keeps_every_tensor_non_empty(out_shape: list, edge: int) -> None:
    """A valid-mode window's output is shorter than its input: the size-1 edge is the smallest
    size where it still has an element, never a size that makes a tensor empty or negative."""
    from cuda2nki.binding import binding_from_dict

    b = binding_from_dict(
        {
            "kernel": "k",
            "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
            "params": {
                "src": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "dst": {"shape": out_shape, "dtype": "float32", "role": "out"},
                "n": 3000,
            },
        }
    )
    pts = fi.test_points(b)
    for p in pts:
        shapes = b.resolve(p.values).shapes
        assert all(d > 0 for s in shapes.values() for d in s), (p.values, shapes)
    assert edge in [int(p.values["n"]) for p in pts]
