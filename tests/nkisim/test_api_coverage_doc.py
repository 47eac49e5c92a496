"""``docs/nki-api-coverage.md`` shows every public name of both API generations (the names of
the public API references: the current ``nki`` package, and the legacy ``neuronxcc.nki``
package's last reference) as implemented or refused with a reason."""

from __future__ import annotations

import pytest

from cuda2nki.docsgen.nki_api import rows
from cuda2nki.docsgen.nki_names import rows as name_rows

CURRENT = {
    "nki": "jit simulate",
    "nisa": """
tensor_engine vector_engine scalar_engine gpsimd_engine unknown_engine engine reduce_cmd
dge_mode oob_mode matmul_perf_mode nc_version dma_engine NkiInstruction NkiValidationError
VirtualRegister get_nc_sub_version get_nc_version dma_copy tensor_copy memset
tensor_copy_predicated nc_matmul nc_matmul_mx nc_transpose dma_transpose tensor_tensor
tensor_scalar tensor_reduce tensor_partition_reduce tensor_scalar_cumulative activation
activation_reduce activate2 iota affine_select local_gather nc_n_gather bn_stats bn_aggr
tensor_tensor_scan nc_stream_shuffle rng dropout set_rng_seed rand_set_state rand_get_state
rand2 exponential reciprocal max8 sequence_bounds scalar_tensor_tensor tensor_scalar_reduce
core_barrier dma_compute quantize_mx range_select select_reduce sendrecv register_alloc
register_move register_load register_store nc_find_index8 nc_match_replace8
nonzero_with_count topk""",
    "nl": """
DType bool_ int8 int16 int32 uint8 uint16 uint32 float16 float32 bfloat16 tfloat32
float8_e4m3 float8_e4m3fn float8_e5m2 float8_e5m2_x4 float8_e4m3fn_x4 float8_e8m0fnu
float4_e2m1fn_x4 sbuf psum hbm private_hbm shared_hbm tile_size average prelu bypass
MemoryRegion NKIObject NkiTensor is_hbm is_on_chip is_psum is_sbuf add subtract multiply
divide maximum minimum abs_max abs_min abs square power equal not_equal less less_equal
greater greater_equal bitwise_and bitwise_or bitwise_xor invert left_shift right_shift
logical_and logical_or logical_xor logical_not exp log sqrt rsqrt tanh sigmoid relu gelu
gelu_apprx_sigmoid gelu_apprx_tanh gelu_dx gelu_apprx_sigmoid_dx silu silu_dx softplus mish
erf erf_dx reciprocal copy sin cos tan arctan ceil floor trunc negative sign fmod mod sum max
min mean prod var all softmax rms_norm where dropout ones full zeros_like empty_like
random_seed expand_dims broadcast_to transpose matmul no_reorder load_transpose2d
gather_flattened ds affine_range sequential_range static_range dynamic_range fori_loop
while_loop ndarray zeros load store program_id num_programs program_ndim shared_constant
shared_identity_matrix device_print rand""",
    "nki.collectives": """
ReplicaGroup all_reduce all_gather all_gather_v reduce_scatter all_to_all all_to_all_v
collective_permute collective_permute_implicit collective_permute_implicit_reduce
collective_permute_implicit_current_processing_rank_id rank_id""",
}

LEGACY = {
    "nki": "baremetal benchmark jit profile simulate_kernel tensor",
    "ncc": "enable_stack_allocator force_auto_alloc skip_middle_end_transformations",
    "ncc.psum": "alloc auto_alloc mod_alloc",
    "ncc.sbuf": "alloc auto_alloc mod_alloc",
    "nisa": """
activation activation_reduce affine_select bn_aggr bn_stats dge_mode dma_copy dma_transpose
dropout engine get_nc_version iota local_gather max8 memset nc_find_index8 nc_match_replace8
nc_matmul nc_stream_shuffle nc_transpose nc_version range_select reciprocal reduce_cmd
scalar_tensor_tensor select_reduce sequence_bounds tensor_copy tensor_copy_dynamic_dst
tensor_copy_dynamic_src tensor_copy_predicated tensor_partition_reduce tensor_reduce
tensor_scalar tensor_scalar_reduce tensor_tensor tensor_tensor_scan""",
    "nl": """
abs add affine_range all all_reduce arange arctan atomic_rmw bfloat16 bitwise_and bitwise_or
bitwise_xor broadcast_to ceil copy cos device_print divide dropout ds empty_like equal erf
erf_dx exp expand_dims float8_e4m3 float8_e5m2 floor fmod fp32 full gather_flattened gelu
gelu_apprx_sigmoid gelu_apprx_tanh gelu_dx greater greater_equal hbm invert left_shift less
less_equal load load_transpose2d log logical_and logical_not logical_or logical_xor
loop_reduce matmul max maximum mean mgrid min minimum mish mod multiply nc ndarray negative
not_equal num_programs ones par_dim power private_hbm prod program_id program_ndim psum rand
random_seed reciprocal relu right_shift rms_norm rsqrt sbuf sequential_range shared_constant
shared_hbm shared_identity_matrix sigmoid sign silu silu_dx sin softmax softplus spmd_dim sqrt
square static_range store subtract sum tan tanh tfloat32 tile_size transpose trunc var where
zeros zeros_like""",
}


def _names(ref: dict[str, str]) -> list[str]:
    return [f"{ns}.{n}" for ns, names in ref.items() for n in names.split()]


@pytest.fixture(scope="module")
def doc() -> dict[str, dict[str, str]]:
    table = rows()
    out = {r["api"]: r for r in table}
    out |= {r["api"]: r for r in name_rows(set(out))}
    return out


@pytest.mark.parametrize(
    ("gen", "api"),
    [("current", n) for n in _names(CURRENT)] + [("legacy", n) for n in _names(LEGACY)],
)
def test_public_name_is_shown_implemented_or_refused_with_a_reason(doc, gen, api):
    assert api in doc, f"{api} is missing from docs/nki-api-coverage.md"
    row = doc[api]
    assert row[gen] in ("implemented", "partial", "not supported"), f"{api}: {row[gen]}"
    if row[gen] != "implemented":
        assert row["notes"], f"{api} is {row[gen]} without a reason"


def test_names_table_kinds(doc):
    kinds = {a: doc[a]["kind"] for a in ("nl.bfloat16", "nl.sbuf", "nisa.engine", "nki.jit")}
    assert kinds == {
        "nl.bfloat16": "dtype",
        "nl.sbuf": "memory region",
        "nisa.engine": "enum",
        "nki.jit": "entry point",
    }
    assert doc["nki.simulate"]["legacy"] == "absent"
    assert doc["nki.baremetal"]["current"] == "absent"
