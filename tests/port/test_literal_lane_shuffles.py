"""Warp shuffles whose source lane or offset differs between threads in literal ports
(:mod:`cuda2nki.lift.literal.laneshuffle`): a leader chosen from a ballot, lanes computed per
thread or read from data (out of range: taken modulo the width), per-thread deltas of
``__shfl_up_sync``/``__shfl_down_sync`` and masks of ``__shfl_xor_sync``, widths below 32,
2-D blocks, a partial last warp, and a warp-cooperative loop over the lanes of a ballot.  The
SIMT interpreter agrees on every test point, bit for bit."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import run_against_simt, tensor_param


def _binding(block: list[int], dtype: str = "float32") -> dict:
    per_block = block[0] * (block[1] if len(block) > 1 else 1)
    return {
        "kernel": "k",
        "launch": {"grid": [f"ceil_div(n, {per_block})"], "block": block},
        "params": {
            "x": tensor_param(["n"], "in", "float32", [-40.0, 40.0]),
            "y": tensor_param(["n"], "out", dtype),
            "n": 1000,
        },
        "check": {"shapes": [{"n": 77}, {"n": 300}]},
    }


_HEAD = "__global__ void k(const float* x, float* y, int n) {\n"
_IHEAD = "__global__ void k(const float* x, int* y, int n) {\n"

KERNELS = [
    ("ballot_leader_broadcast", [64], _HEAD, """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    unsigned bal = __ballot_sync(0xffffffffu, v > 10.0f);
    int who = bal ? __ffs(bal) - 1 : 0;
    float lead = __shfl_sync(0xffffffffu, v, who);
    if (i < n) y[i] = lead - v;
}"""),
    ("rotated_lane_of_a_2d_block", [32, 4], _HEAD, """
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int g = blockIdx.x * blockDim.x * blockDim.y + t;
    int lane = threadIdx.x & 31;
    float v = g < n ? x[g] : 0.0f;
    float a = __shfl_sync(0xffffffff, v, (lane + 1) % 32);
    float b = __shfl_sync(0xffffffff, v, threadIdx.x + 3, 16);
    if (g < n) y[g] = a + 2.0f * b;
}"""),
    ("lane_read_from_data_out_of_range", [96], _IHEAD, """
    int gid = threadIdx.x + blockIdx.x * blockDim.x;
    int src = gid < n ? (int)x[gid] : 0;
    int mine = gid * 7 - 3;
    int got = __shfl_sync(0xffffffff, mine, src);
    int got8 = __shfl_sync(0xffffffff, mine, src, 8);
    if (gid < n) y[gid] = got * 3 + got8;
}"""),
    ("per_thread_up_down_deltas", [64], _HEAD, """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    unsigned d = threadIdx.x & 3u;
    int e = i < n ? ((int)x[i] & 7) : 0;
    float dn = __shfl_down_sync(0xffffffff, v, d, 8);
    float up = __shfl_up_sync(0xffffffff, v, e);
    if (i < n) y[i] = dn - 3.0f * up;
}"""),
    ("per_thread_xor_masks", [128], _IHEAD, """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? (int)x[i] : 0;
    int m = 1 << (threadIdx.x % 5);
    int a = __shfl_xor_sync(0xffffffff, v, m);
    int b = __shfl_xor_sync(0xffffffff, v, m, 16);
    if (i < n) y[i] = a * 100 + b;
}"""),
    ("partial_last_warp", [48], _HEAD, """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : -1.0f;
    int lane = threadIdx.x % 32;
    float a = __shfl_sync(0xffffffff, v, 31 - lane);
    float b = __shfl_down_sync(0xffffffff, v, lane % 4 + 1);
    if (i < n) y[i] = a + b;
}"""),
    ("cooperative_loop_over_ballot_lanes", [64], _HEAD, """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    int lane = threadIdx.x % 32;
    unsigned bal = __ballot_sync(0xffffffff, v > 20.0f);
    float acc = 0.0f;
    while (bal != 0) {
        const int who = __ffs(bal) - 1;
        bal &= bal - 1;
        const float wv = __shfl_sync(0xffffffff, v, who);
        acc += wv * (float)(lane + 1);
    }
    if (i < n) y[i] = acc;
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "head", "body"), KERNELS, ids=[k[0] for k in KERNELS])
def test_per_thread_lane_shuffles_port_exactly(name, block, head, body, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(head + body)
    dtype = "int32" if head is _IHEAD else "float32"
    binding = binding_from_dict(_binding(block, dtype), path=str(cu))
    res = port_file(cu, binding=binding, target="nki", lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("name", ["ballot_leader_broadcast", "per_thread_up_down_deltas"])
def test_per_thread_lane_shuffles_port_for_legacy(name, tmp_path) -> None:
    _, block, head, body = next(k for k in KERNELS if k[0] == name)
    cu = tmp_path / f"{name}.cu"
    cu.write_text(head + body)
    binding = binding_from_dict(_binding(block), path=str(cu))
    res = port_file(cu, binding=binding, target="legacy", lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_legacy.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches
