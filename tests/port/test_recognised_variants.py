"""Spellings of idioms that once fell to the literal lowering port through the recognised path and
match the SIMT interpreter exactly on both targets.  Index-valued reductions (argmax / argmin,
cuda2nki.lift.argfold), on shapes that are not multiples of 128
and with many ties; the
nearest-centroid spelling nests a distance sum (a loop over the features) in the argmin (values floor(2x)), so the CUDA loop's tie rule is what is compared."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.port.acceptance import port_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lift"))
from variants import (  # noqa: E402
    ARG_VARIANTS,
    BLELLOCH_VARIANTS,
    HALO_VARIANTS,
    INTERLEAVE_VARIANTS,
    ONLINE_VARIANTS,
    PERMUTE_VARIANTS,
    ROTATE_VARIANTS,
    SCAN_VARIANTS,
    TILE_VARIANTS,
    TOTAL_VARIANTS,
    WINDOW2D_VARIANTS,
    WINDOW_VARIANTS,
)

PORTED = ARG_VARIANTS
#: plain windows and windows staged through shared memory with halos
WINDOWS = WINDOW_VARIANTS + HALO_VARIANTS + WINDOW2D_VARIANTS


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in PORTED], ids=[v[0] for v in PORTED]
)
def test_arg_reduction_ports_and_matches(vid, src, bdict, target, tmp_path) -> None:
    res, run, points = port_variant(vid, src, bdict, target, tmp_path)
    assert res.idiom == "reduce"
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert "iota" in res.source and "tensor_reduce" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in TOTAL_VARIANTS], ids=[v[0] for v in TOTAL_VARIANTS]
)
def test_block_totals_port_as_one_vector_reduction(vid, src, bdict, target, tmp_path) -> None:
    """A per-block value of the block's sum added into one element (atomics after a shared tree
    or two shuffle levels): one whole-vector reduction, its epilogue adding into the element."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert res.ir_tiles is not None and "tensor_reduce" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in WINDOWS], ids=[v[0] for v in WINDOWS]
)
def test_windows_port_as_padded_shifted_loads(vid, src, bdict, target, tmp_path) -> None:
    """A window with a zero boundary: one padded shifted load per tap inside a loop over the
    taps, around a flat chunk (1-D) or a row tile (2-D); sizes down to fewer elements than
    taps."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert res.idiom == "stencil" and "memset" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in TILE_VARIANTS], ids=[v[0] for v in TILE_VARIANTS]
)
def test_shared_tiles_port_as_shifted_reads(vid, src, bdict, target, tmp_path) -> None:
    """A 2-D tile staged with its halo through shared memory (a cooperative strided load, a
    boundary copy beside the interior) ports as shifted reads of the global input."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in SCAN_VARIANTS], ids=[v[0] for v in SCAN_VARIANTS]
)
def test_block_scans_port_as_tensor_scans(vid, src, bdict, target, tmp_path) -> None:
    """A Hillis-Steele block scan: one scan along the rows of [blocks, block] (the vector's
    ragged end padded), not log2(block) shifted adds."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert res.idiom == "scan" and "tensor_tensor_scan" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"),
    [v[:3] for v in BLELLOCH_VARIANTS],
    ids=[v[0] for v in BLELLOCH_VARIANTS],
)
def test_work_efficient_scans_port_as_tensor_scans(vid, src, bdict, target, tmp_path) -> None:
    """An up-sweep / down-sweep (or Brent-Kung) network in place: one scan along the rows of
    [blocks, 2 * block], exclusive where the root was cleared, and the chunk total a row sum --
    not a thread-by-thread replay of the network."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert "scan" in res.idiom.split(",") and "tensor_tensor_scan" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in ONLINE_VARIANTS], ids=[v[0] for v in ONLINE_VARIANTS]
)
def test_online_softmax_lanes_port_as_row_softmax(vid, src, bdict, target, tmp_path) -> None:
    """(max, normaliser) pairs merged across lanes: a row max and a row sum of exponentials
    (a causal row masks the positions past its own with an iota comparison)."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert res.idiom == "softmax"


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"),
    [v[:3] for v in INTERLEAVE_VARIANTS],
    ids=[v[0] for v in INTERLEAVE_VARIANTS],
)
def test_interleaved_results_port_as_one_statement(vid, src, bdict, target, tmp_path) -> None:
    """Several results per thread a constant stride apart: one statement over the finer axis
    (a register-blocked matmul is one matmul)."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert len([c for c in res.ir_intent.body if hasattr(c, "idiom")]) == 1


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in PERMUTE_VARIANTS], ids=[v[0] for v in PERMUTE_VARIANTS]
)
def test_permutations_port_as_transposed_blocks(vid, src, bdict, target, tmp_path) -> None:
    """Permutations of 3 or 4 axes: tensor-engine transposes of 2-D blocks, loops around."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert "transpose" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in ROTATE_VARIANTS], ids=[v[0] for v in ROTATE_VARIANTS]
)
def test_rotations_port_as_two_shifted_copies(vid, src, bdict, target, tmp_path) -> None:
    """A roll by a runtime amount (negative, or more than the length): two shifted copies."""
    res, run, points = port_variant(vid, src, bdict, target, tmp_path)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert len(res.ir_tiles.body) >= 2 and "iota" not in res.source


def test_nearest_centroid_accumulates_distances_in_a_loop(tmp_path) -> None:
    """The distance sum nested in the arg-reduction is a sequential loop over the features
    around the [rows, centroids] tile (a reduction along a loop), not a literal port."""
    vid, src, bdict = next(v[:3] for v in ARG_VARIANTS if v[0] == "argreduce/nearest_centroid")
    res, run, _ = port_variant(vid, src, bdict, "nki", tmp_path)
    assert not run.mismatches
    assert re.search(r"for \w+ in range\(d\):", res.source)


@pytest.mark.parametrize("vid", ["argreduce/nearest_centroid", "argreduce/thread_row_first_max"])
def test_the_keys_are_computed_once(vid, tmp_path) -> None:
    """The keys compared with their extremum (over ``j``) and the extremum's candidates (over
    another axis name) are one tile: one distance loop, one load of each input row tile."""
    src, bdict = next(v[1:3] for v in ARG_VARIANTS if v[0] == vid)
    res, run, _ = port_variant(vid, src, bdict, "nki", tmp_path)
    assert not run.mismatches
    loops = re.findall(r"for \w+ in range\(d\):", res.source)
    assert len(loops) == (1 if "nearest" in vid else 0), res.source
    assert res.source.count("dma_copy(") <= (3 if "nearest" in vid else 2), res.source
