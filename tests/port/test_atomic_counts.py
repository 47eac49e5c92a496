"""Atomics into an element no thread coordinate selects (``atomicAdd(counter, 1)``,
``atomicAdd(&total[0], x[i])``): every thread of the launch contributes once, so the port
accumulates the whole launch domain -- threads and blocks the value does not mention included,
threads pinned by an equality guard excluded -- onto the output's initial contents.  Under an
``inout`` binding those are the tensor's values; under ``out`` they are the zeros the host
left (``cudaMemset``).  Each spelling is ported on both targets and compared with the SIMT
interpreter at every test point."""

from __future__ import annotations

import pytest

from tests.port.acceptance import port_variant
from tests.port.acceptance import tensor_param as _t


def _b(grid: list, params: dict, shapes: list[dict], block: list) -> dict:
    return {"launch": {"grid": grid, "block": block}, "params": params, "check": {"shapes": shapes}}


COUNTS = [
    (
        "atomic/int_counter_no_index",
        """
__global__ void k(int* counter) {
    atomicAdd(counter, 1);
}""",
        lambda role: _b([37], {"counter": _t([1], role, "int32", [-50, 50])}, [{}], [128]),
    ),
    (
        "atomic/int_counter_result_unused_2d_launch",
        """
__global__ void k(int* hits, int unused) {
    int old = atomicAdd(&hits[0], 3);
}""",
        lambda role: _b(
            [5, 3], {"hits": _t([4], role, "int32", [0, 9]), "unused": 1}, [{}], [32, 4]
        ),
    ),
    (
        "atomic/float_count_guarded",
        """
__global__ void k(float* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&count[0], 1.0f);
}""",
        lambda role: _b(
            ["ceil_div(n, 128)"],
            {"count": _t([1], role), "n": 1000},
            [{"n": 1}, {"n": 300}],
            [128],
        ),
    ),
    (
        "atomic/float_sum_guarded_early_return",
        """
__global__ void k(const float* x, float* total, int len) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= len) return;
    atomicAdd(total, x[t]);
}""",
        lambda role: _b(
            ["ceil_div(len, 64)"],
            {"x": _t(["len"], "in"), "total": _t([1], role), "len": 700},
            [{"len": 65}, {"len": 2000}],
            [64],
        ),
    ),
    (
        "atomic/per_block_leader",
        """
__global__ void k(unsigned int* blocks) {
    if (threadIdx.x == 0) atomicAdd(blocks, 1u);
}""",
        lambda role: _b([23], {"blocks": _t([1], role, "uint32", [0, 100])}, [{}], [128]),
    ),
    (
        "atomic/atomic_inc_full_range_guarded",
        """
__global__ void k(unsigned int* ticket, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicInc(&ticket[0], 0xffffffffu);
}""",
        lambda role: _b(
            ["ceil_div(n, 128)"],
            {"ticket": _t([1], role, "uint32", [0, 1000]), "n": 500},
            [{"n": 129}, {"n": 1}],
            [128],
        ),
    ),
    (
        "atomic/block_id_value",
        """
__global__ void k(int* acc) {
    atomicAdd(acc, (int)blockIdx.x);
}""",
        lambda role: _b([9], {"acc": _t([1], role, "int32", [-5, 5])}, [{}], [64]),
    ),
]


@pytest.mark.parametrize("role", ["inout", "out"])
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bind"), COUNTS, ids=[v[0] for v in COUNTS])
def test_atomic_counts_cover_the_launch(vid, src, bind, target, role, tmp_path) -> None:
    _, run, points = port_variant(vid, src, bind(role), target, tmp_path, tol=1e-3)
    assert points and not run.mismatches, run.mismatches


def test_atomic_inc_below_the_limit_ports_thread_by_thread(tmp_path) -> None:
    """A wrapping increment is no count (C2N2022): its literal port applies it thread by
    thread, in the interpreter's order, and matches it exactly."""
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file
    from tests.port.acceptance import run_against_simt

    cu = tmp_path / "ring.cu"
    cu.write_text("__global__ void k(unsigned int* slot) { atomicInc(slot, 15u); }\n")
    bind = _b([2], {"slot": _t([1], "inout", "uint32")}, [{}], [64])
    binding = binding_from_dict({"kernel": "k", **bind}, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    assert "C2N2022" in {d.code for d in res.diagnostics}
    port = tmp_path / "ring_port.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert run.points and not run.mismatches, run.mismatches
