"""Every documented NKI API is either implemented or refused with C2N3001 at the port's line.

The names are those of reference NKI.md sections 6 (nki.language), 7 (nki.isa) and 4.3 (tensor
view methods), plus issue 3's list.  A name is *implemented* when the simulator's namespace
provides it; otherwise using it must stop the run with C2N3001 naming the API (never an
AttributeError or a silent wrong answer).  The refused names are pinned below so that the
coverage table stays honest.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.importer import load_module
from cuda2nki.nkisim.tensor import wrap_host

ISA = """
dma_copy dma_transpose dma_compute tensor_copy tensor_copy_predicated memset iota local_gather
nc_n_gather nc_stream_shuffle sendrecv core_barrier nc_matmul nc_matmul_mx nc_transpose
tensor_tensor tensor_scalar scalar_tensor_tensor tensor_reduce tensor_partition_reduce
tensor_scalar_reduce tensor_scalar_cumulative tensor_tensor_scan activation activation_reduce
activate2 exponential reciprocal bn_stats bn_aggr affine_select range_select select_reduce dropout
rng rand2 set_rng_seed rand_set_state rand_get_state max8 nc_find_index8 nc_match_replace8 topk
nonzero_with_count sequence_bounds quantize_mx tensor_copy_dynamic_src tensor_copy_dynamic_dst
engine reduce_cmd dge_mode oob_mode matmul_perf_mode nc_version dma_engine get_nc_version
tensor_engine vector_engine scalar_engine gpsimd_engine unknown_engine
""".split()

LANGUAGE = """
ndarray zeros ones full zeros_like empty_like rand random_seed shared_constant
shared_identity_matrix par_dim arange mgrid spmd_dim nc static_cast load store load_transpose2d
copy broadcast_to expand_dims gather_flattened atomic_rmw ds matmul transpose add subtract
multiply divide power maximum minimum fmod mod abs_max abs_min abs negative sign trunc floor ceil
exp log sqrt rsqrt reciprocal square sin cos tan arctan relu sigmoid tanh gelu gelu_apprx_tanh
gelu_apprx_sigmoid gelu_apprx_sigmoid_dx gelu_dx silu silu_dx softplus mish erf erf_dx prelu
bypass sum max min mean prod var all softmax rms_norm loop_reduce all_reduce equal not_equal less
less_equal greater greater_equal logical_and logical_or logical_xor logical_not bitwise_and
bitwise_or bitwise_xor invert left_shift right_shift where dropout program_id num_programs
program_ndim device_print no_reorder sbuf psum hbm private_hbm shared_hbm is_hbm is_sbuf is_psum
is_on_chip tile_size affine_range sequential_range static_range fori_loop while_loop
bfloat16 float8_e4m3 float8_e5m2 float8_e4m3fn tfloat32 float32 float16 int8 int16 int32 uint8
uint16 uint32
""".split()

TENSOR = """
slice select permute broadcast expand_dim squeeze_dim reshape_dim flatten_dims reshape rearrange
view reinterpret_cast vector_select indirect get_pattern is_contiguous is_indirect ap broadcast_to
shape strides offset dtype buffer name ndim size
""".split()

# documented names the simulator refuses (C2N3001), per namespace
REFUSED = {
    "nki.isa": {
        "sendrecv",
        "nc_matmul_mx",
        "quantize_mx",
        "tensor_copy_dynamic_src",
        "tensor_copy_dynamic_dst",
        "topk",
    },
    "nki.language": {
        "par_dim",
        "arange",
        "mgrid",
        "spmd_dim",
        "nc",
        "static_cast",
        "atomic_rmw",
        "loop_reduce",
        "all_reduce",
    },
    "neuronxcc.nki.isa": {
        "sendrecv",
        "core_barrier",
        "nc_matmul_mx",
        "activate2",
        "exponential",
        "rng",
        "rand2",
        "set_rng_seed",
        "rand_set_state",
        "rand_get_state",
        "topk",
        "nonzero_with_count",
        "quantize_mx",
        "dma_engine",
    },
    "neuronxcc.nki.language": set(),
}
TENSOR_REFUSED = {"rearrange", "indirect"}

TOP = {
    "nki": ("jit simulate language isa typing".split(), set()),
    "neuronxcc.nki": (
        "jit trace baremetal benchmark profile simulate_kernel language isa typing tensor "
        "FrameworkKernel".split(),
        {"FrameworkKernel"},
    ),
}

PORT = """
import nki
import nki.isa as nisa
import nki.language as nl
import neuronxcc.nki.isa as lisa
import neuronxcc.nki.language as lnl

from neuronxcc import nki as lnki

NS = {
    "nki": nki,
    "nki.isa": nisa,
    "nki.language": nl,
    "neuronxcc.nki": lnki,
    "neuronxcc.nki.isa": lisa,
    "neuronxcc.nki.language": lnl,
}


def probe(ns, name):
    return getattr(NS[ns], name)  # PROBE


def probe_tensor(t, name):
    return getattr(t, name)  # PROBE_TENSOR
"""


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    path = tmp_path_factory.mktemp("coverage") / "probe_port.py"
    path.write_text(textwrap.dedent(PORT))
    lines = path.read_text().splitlines()
    line = {
        tag: i + 1
        for i, ln in enumerate(lines)
        for tag in ("PROBE", "PROBE_TENSOR")
        if ln.endswith(f"# {tag}")
    }
    return load_module(path), str(path), line


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except DiagnosticError as exc:
        return None, exc.diagnostic


CASES = [(ns, n) for ns in REFUSED for n in (ISA if ns.endswith("isa") else LANGUAGE)]


@pytest.mark.parametrize(("ns", "name"), CASES, ids=[f"{ns}.{n}" for ns, n in CASES])
def test_documented_name_is_implemented_or_refused(port, ns, name):
    mod, path, line = port
    value, diag = _outcome(mod.probe, ns, name)
    if name in REFUSED[ns]:
        assert diag is not None, f"{ns}.{name} is provided: take it out of REFUSED"
        assert diag.code == "C2N3001"
        assert f"'{ns}.{name}'" in diag.message and "not supported by the simulator" in diag.message
        assert (diag.loc.file, diag.loc.line) == (path, line["PROBE"])
    else:
        assert diag is None, f"{ns}.{name} refused: {diag.message}"
        assert value is not None


TOP_CASES = [(ns, n) for ns, (names, _) in TOP.items() for n in names]


@pytest.mark.parametrize(("ns", "name"), TOP_CASES, ids=[f"{ns}.{n}" for ns, n in TOP_CASES])
def test_top_level_name_is_implemented_or_refused(port, ns, name):
    mod, path, line = port
    value, diag = _outcome(mod.probe, ns, name)
    if name in TOP[ns][1]:
        assert diag is not None and diag.code == "C2N3001"
        assert (diag.loc.file, diag.loc.line) == (path, line["PROBE"])
    else:
        assert diag is None and value is not None


# (nki.collectives imports; its names are refused where used: test_public_namespaces.py)
@pytest.mark.parametrize(
    "module", ["nki.distributed", "neuronxcc.nki.nccl", "nki.compiler.backends"]
)
def test_unmodelled_submodule_import_is_refused(tmp_path, module):
    port = tmp_path / "imports.py"
    port.write_text(f"import nki\nimport {module}\n")
    with pytest.raises(DiagnosticError) as exc:
        load_module(port)
    diag = exc.value.diagnostic
    assert diag.code == "C2N3001" and module in diag.message
    assert (diag.loc.file, diag.loc.line) == (str(port), 2)


@pytest.mark.parametrize("name", TENSOR)
def test_documented_tensor_method_is_implemented_or_refused(port, name):
    mod, path, line = port
    s = st.SimState()
    st.push(s)
    try:
        t = nl.ndarray((4, 8), nl.float32)
        value, diag = _outcome(mod.probe_tensor, t, name)
    finally:
        st.pop()
    if name in TENSOR_REFUSED:
        assert diag is not None and diag.code == "C2N3001"
        assert f"'NkiTensor.{name}'" in diag.message
        assert (diag.loc.file, diag.loc.line) == (path, line["PROBE_TENSOR"])
    else:
        assert diag is None, diag and diag.message
        assert value is not None


def test_unknown_tensor_attribute_stays_an_attribute_error():
    s = st.SimState()
    st.push(s)
    try:
        t = nl.ndarray((4, 8), nl.float32)
        assert not hasattr(t, "_fields")
        with pytest.raises(AttributeError):
            t.no_such_thing  # noqa: B018
    finally:
        st.pop()


def test_vector_select_gathers_rows():
    s = st.SimState()
    st.push(s)
    try:
        data = np.arange(40, dtype=np.float32).reshape(10, 4)
        h = wrap_host(data)
        rows = nl.ndarray((3, 1), nl.int32)
        rows.assign(np.array([[7], [0], [7]]))
        dst = nl.ndarray((3, 4), nl.float32)
        from cuda2nki.nkisim import isa as nisa

        nisa.dma_copy(dst=dst, src=h[:, :].vector_select(0, rows))
        np.testing.assert_array_equal(dst.values(), data[[7, 0, 7]])
        rows.assign(np.array([[1], [10], [2]]))
        with pytest.raises(DiagnosticError) as exc:
            nisa.dma_copy(dst=dst, src=h.vector_select(0, rows))
        assert exc.value.diagnostic.code == "C2N3019"
    finally:
        st.pop()
