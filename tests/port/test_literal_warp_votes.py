"""Pre-CUDA 9 warp shuffles (``__shfl_down(v, d)`` without a mask) and warp votes
(``__ballot``/``__any``/``__all``, their ``_sync`` forms, ``__activemask()``, the lane masks
``__lanemask_lt()``... and the coalesced groups built on them) in literal ports
(:mod:`cuda2nki.lift.literal.votes`): the SIMT interpreter agrees on every test point, with
votes under branches and early returns (only the active lanes vote), masks that select part of
a warp, 1-D and 2-D blocks; a block with a partial warp is refused by name."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import run_against_simt, tensor_param


def _binding(block: list[int]) -> dict:
    per_block = block[0] * (block[1] if len(block) > 1 else 1)
    return {
        "kernel": "k",
        "launch": {"grid": [f"ceil_div(n, {per_block})"], "block": block},
        "params": {
            "x": tensor_param(["n"], "in", "float32", [-4.0, 4.0]),
            "y": tensor_param(["n"], "out"),
            "n": 1000,
        },
        "check": {"shapes": [{"n": 77}, {"n": 300}]},
    }


_HEAD = "__global__ void k(const float* x, float* y, int n) {\n"

KERNELS = [
    ("legacy_shfl_down_tree", [64], _HEAD + """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
    if (i < n) y[i] = (threadIdx.x % 32 == 0) ? v : 0.0f;
}"""),
    ("legacy_shfl_up_width_and_broadcast", [32, 2], _HEAD + """
    int tid = threadIdx.y * blockDim.x + threadIdx.x;
    int gid = blockIdx.x * blockDim.x * blockDim.y + tid;
    float s = gid < n ? x[gid] : 0.0f;
    float up = __shfl_up(s, 1, 16);
    float first = __shfl(s, 0);
    float flip = __shfl_xor(s, 8);
    if (gid < n) y[gid] = up - 2.0f * first + flip;
}"""),
    ("ballot_and_popc", [96], _HEAD + """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned positive = __ballot(i < n && x[i] > 0.0f);
    unsigned low_half = __ballot_sync(0x0000ffffu, i < n && x[i] > 1.0f);
    if (i < n) y[i] = (float)__popc(positive) + 100.0f * __popc(low_half)
                      + (float)((positive >> (threadIdx.x % 32)) & 1u);
}"""),
    ("any_all_under_a_branch", [64], _HEAD + """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float out = 0.0f;
    if (i % 3 != 0) {
        out = __any_sync(__activemask(), v > 3.5f) + 2.0f * __all_sync(0xffffffff, v > -3.9f);
    } else {
        out = 4.0f * __any(v < -3.0f) + 8.0f * __all(v < 3.0f);
    }
    y[i] = out;
}"""),
    ("activemask_leader", [32], _HEAD + """
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < n && x[idx] > -1.0f) {
        unsigned active = __activemask();
        int leader = __ffs(active) - 1;
        int rank = __popc(active & ((1u << (threadIdx.x & 31)) - 1u));
        y[idx] = (float)rank + ((threadIdx.x & 31) == leader ? 1000.0f : 0.0f);
    } else if (idx < n) {
        y[idx] = (float)__popc(__activemask());
    }
}"""),
    ("lane_masks", [64], _HEAD + """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned below = __lanemask_lt(), upto = __lanemask_le(), self_bit = __lanemask_eq();
    unsigned above = __lanemask_gt(), from = __lanemask_ge();
    if (i < n) y[i] = (float)__popc(below) + 100.0f * __popc(above) + 1e4f * __popc(upto ^ from)
                      + 1e6f * (float)(self_bit == (upto & from));
}"""),
    ("coalesced_group_rank", [32], "#include <cooperative_groups.h>\n"
     "namespace cg = cooperative_groups;\n" + _HEAD + """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) {
        cg::coalesced_group active = cg::coalesced_threads();
        y[i] = (float)active.thread_rank() + 100.0f * active.size() + x[i];
    } else if (i < n) {
        y[i] = -1.0f;
    }
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "src"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_votes_and_legacy_shuffles_port_literally(name, block, src, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict(_binding(block), path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches


def test_a_partial_warp_is_refused_by_name(tmp_path) -> None:
    cu = tmp_path / "partial.cu"
    cu.write_text(KERNELS[2][2])
    binding = binding_from_dict(_binding([48]), path=str(cu))
    res = port_file(cu, binding=binding, target="nki", lowering="literal")
    assert res.source is None
    assert any("partial warp" in d.message for d in res.diagnostics), res.diagnostics
