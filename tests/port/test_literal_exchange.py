"""``atomicExch`` whose old value is unused is a store in the literal lowering: the element keeps
the value of the thread serialised last (thread order in the SIMT interpreter), which is what a
literal store leaves (:mod:`cuda2nki.lift.literal.exchange`).  One whose old value is used, and
an ``atomicMax`` whose old value is used, go thread by thread (:mod:`.serialatomic`)."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel, _matches

_PARAMS = (
    'slot = { shape = [3], dtype = "int32", role = "out" }\n'
    'tag = { shape = [4], dtype = "float32", role = "out" }\n'
    'x = { shape = ["n"], dtype = "float32", role = "in", range = [0, 0.99] }\n'
    "n = 150"
)

KERNELS = {
    # every thread at one element: the last thread's id stays
    "one_element_for_all": """
__global__ void last(int* slot, float* tag, const float* x, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) atomicExch(&slot[1], tid);
    if (tid < n) atomicExch(tag, x[tid]);
}
""",
    # a few elements at a thread-index address, under a data guard
    "index_address_under_a_data_guard": """
__global__ void last(int* slot, float* tag, const float* x, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < n && x[t] > 0.3f) atomicExch(&slot[t % 3], t);
}
""",
    # an address read from data, through pointer arithmetic
    "data_address": """
__global__ void last(int* slot, float* tag, const float* x, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) atomicExch(tag + (int)(x[t] * 4.0f), x[t] + 1.0f);
}
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_exchange_without_its_old_value_ports(tmp_path, name):
    cu = _kernel(tmp_path, KERNELS[name], "last", '"ceil_div(n, 64)"', "64", _PARAMS,
                 ["n = 1", "n = 65"])  # fmt: skip
    _matches(cu, tmp_path)


@pytest.mark.parametrize(
    "call",
    [
        "int old = atomicExch(&slot[0], t); slot[1 + t % 2] = old;",
        "int k = atomicMax(&slot[0], 1); if (k < 4) tag[k] = x[t];",
    ],
)
def test_atomics_whose_old_value_is_used_port_thread_by_thread(tmp_path, call):
    src = (
        "__global__ void last(int* slot, float* tag, const float* x, int n) {\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (t < n) {{ {call} }}\n}}\n"
    )
    cu = _kernel(tmp_path, src, "last", '"ceil_div(n, 64)"', "64", _PARAMS, ["n = 70"])
    _matches(cu, tmp_path)
