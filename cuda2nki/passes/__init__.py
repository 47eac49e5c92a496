"""Passes: intent tile IR -> scheduled tiles.  One pass per file, named, composable.

:func:`all_passes` is the registry ``{kebab-name: factory}`` (lazy imports keep start-up cheap);
:func:`parse_pipeline` turns ``"choose-layout,tile-sizes{free=2048}"`` into pass objects and
:data:`DEFAULT_PIPELINE` is what ``cuda2nki port`` runs without ``-p``.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.passes.base import Pass, PassContext, build_pass, run_pipeline, split_spec

DEFAULT_PIPELINE = "fold-peeled,drop-identities,unit-reductions,split-sums,factor-scales,dead-stores,hoist-guards,guards-to-domains,split-rotations,merge-lanes,one-hot-gather,split-flat,choose-layout,tile-sizes,coalesce-dma,dtype-policy,clamp-reads,lower-tiles,fuse-loops,hoist-loads,dedupe-loads,interleaved-loads,halo-loads,common-tiles,row-moments,record-rows,fold-sizes"


def _fold_peeled() -> type:
    from cuda2nki.passes.fold_peeled import FoldPeeledPass

    return FoldPeeledPass


def _drop_identities() -> type:
    from cuda2nki.passes.drop_identities import DropIdentitiesPass

    return DropIdentitiesPass


def _unit_reductions() -> type:
    from cuda2nki.passes.unit_reductions import UnitReductionsPass

    return UnitReductionsPass


def _split_sums() -> type:
    from cuda2nki.passes.split_sums import SplitSumsPass

    return SplitSumsPass


def _factor_scales() -> type:
    from cuda2nki.passes.factor_scales import FactorScalesPass

    return FactorScalesPass


def _record_rows() -> type:
    from cuda2nki.passes.record_rows import RecordRowsPass

    return RecordRowsPass


def _halo_loads() -> type:
    from cuda2nki.passes.halo_loads import HaloLoadsPass

    return HaloLoadsPass


def _common_tiles() -> type:
    from cuda2nki.passes.common_tiles import CommonTilesPass

    return CommonTilesPass


def _interleaved_loads() -> type:
    from cuda2nki.passes.interleaved_loads import InterleavedLoadsPass

    return InterleavedLoadsPass


def _row_moments() -> type:
    from cuda2nki.passes.row_moments import RowMomentsPass

    return RowMomentsPass


def _fold_sizes() -> type:
    from cuda2nki.passes.fold_sizes import FoldSizesPass

    return FoldSizesPass


def _dead_stores() -> type:
    from cuda2nki.passes.dead_stores import DeadStoresPass

    return DeadStoresPass


def _hoist_guards() -> type:
    from cuda2nki.passes.hoist_guards import HoistGuardsPass

    return HoistGuardsPass


def _guards_to_domains() -> type:
    from cuda2nki.passes.guards_to_domains import GuardsToDomainsPass

    return GuardsToDomainsPass


def _split_rotations() -> type:
    from cuda2nki.passes.split_rotations import SplitRotationsPass

    return SplitRotationsPass


def _merge_lanes() -> type:
    from cuda2nki.passes.merge_lanes import MergeLanesPass

    return MergeLanesPass


def _one_hot_gather() -> type:
    from cuda2nki.passes.one_hot_gather import OneHotGatherPass

    return OneHotGatherPass


def _split_flat() -> type:
    from cuda2nki.passes.split_flat import SplitFlatPass

    return SplitFlatPass


def _choose_layout() -> type:
    from cuda2nki.passes.choose_layout import ChooseLayoutPass

    return ChooseLayoutPass


def _tile_sizes() -> type:
    from cuda2nki.passes.tile_sizes import TileSizesPass

    return TileSizesPass


def _coalesce_dma() -> type:
    from cuda2nki.passes.coalesce_dma import CoalesceDmaPass

    return CoalesceDmaPass


def _dtype_policy() -> type:
    from cuda2nki.passes.dtype_policy import DtypePolicyPass

    return DtypePolicyPass


def _clamp_reads() -> type:
    from cuda2nki.passes.clamp_reads import ClampReadsPass

    return ClampReadsPass


def _lower_tiles() -> type:
    from cuda2nki.passes.lower_tiles import LowerTilesPass

    return LowerTilesPass


def _fuse_loops() -> type:
    from cuda2nki.passes.fuse_loops import FuseLoopsPass

    return FuseLoopsPass


def _dedupe_loads() -> type:
    from cuda2nki.passes.dedupe_loads import DedupeLoadsPass

    return DedupeLoadsPass


def _hoist_loads() -> type:
    from cuda2nki.passes.hoist_loads import HoistLoadsPass

    return HoistLoadsPass


def all_passes() -> dict[str, Callable[[], type]]:
    return {
        "fold-peeled": _fold_peeled,
        "drop-identities": _drop_identities,
        "split-sums": _split_sums,
        "factor-scales": _factor_scales,
        "dead-stores": _dead_stores,
        "hoist-guards": _hoist_guards,
        "guards-to-domains": _guards_to_domains,
        "split-rotations": _split_rotations,
        "merge-lanes": _merge_lanes,
        "one-hot-gather": _one_hot_gather,
        "split-flat": _split_flat,
        "unit-reductions": _unit_reductions,
        "choose-layout": _choose_layout,
        "tile-sizes": _tile_sizes,
        "coalesce-dma": _coalesce_dma,
        "dtype-policy": _dtype_policy,
        "clamp-reads": _clamp_reads,
        "lower-tiles": _lower_tiles,
        "fuse-loops": _fuse_loops,
        "dedupe-loads": _dedupe_loads,
        "hoist-loads": _hoist_loads,
        "interleaved-loads": _interleaved_loads,
        "record-rows": _record_rows,
        "halo-loads": _halo_loads,
        "common-tiles": _common_tiles,
        "row-moments": _row_moments,
        "fold-sizes": _fold_sizes,
    }


def parse_pipeline(spec: str | None = None) -> list[Pass]:
    registry = all_passes()
    return [build_pass(name, opts, registry) for name, opts in split_spec(spec or DEFAULT_PIPELINE)]


__all__ = [
    "DEFAULT_PIPELINE",
    "Pass",
    "PassContext",
    "all_passes",
    "parse_pipeline",
    "run_pipeline",
]
