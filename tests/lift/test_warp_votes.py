"""Warp votes (``__any``/``__any_sync``, ``__all``/``__all_sync``, ``__popc`` of ``__ballot``/
``__ballot_sync``) are lifted as folds over the lanes of a warp: the kernel is a recognised
reduce whose port passes the check; only the lanes the index guards admit vote.  A ballot's
mask used as a number is refused by the lifter (the kernel ports literally)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.test_literal import _kernel

_PARAMS = (
    'x = { shape = ["n"], dtype = "float32", role = "in", range = [-3.0, 3.0] }\n'
    'cnt = { shape = ["ceil_div(n, 32)"], dtype = "int32", role = "out" }\n'
    'flag = { shape = ["ceil_div(n, 32)"], dtype = "int32", role = "out" }\nn = 300'
)

VOTES = {
    "legacy_names_guarded": """
__global__ void kern(const float* x, int* cnt, int* flag, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        unsigned m = __ballot(x[g] > 0.5f);
        int some = __any(x[g] < -2.0f);
        if ((threadIdx.x & 31) == 0) { cnt[g / 32] = __popc(m); flag[g / 32] = some; }
    }
}
""",
    "sync_spellings_early_return": """
__global__ void kern(const float* x, int* cnt, int* flag, int n) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= n) return;
    int every = __all_sync(__activemask(), fabsf(x[t]) < 2.5f);
    int many = __popc(__ballot_sync(__activemask(), x[t] * 2.0f > 1.0f));
    if (threadIdx.x % 32 == 0) {
        flag[t / 32] = every + 2 * __any_sync(__activemask(), x[t] > 2.0f);
        cnt[t / 32] = many;
    }
}
""",
    "unguarded_votes_guarded_predicate": """
__global__ void kern(const float* x, int* cnt, int* flag, int n) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    int i = w * 32 + lane;
    unsigned bits = __ballot_sync(0xffffffffu, i < n && x[i] <= 0.0f);
    int none = __all_sync(0xffffffffu, i >= n || x[i] > -2.9f);
    if (lane == 0 && i < n) { cnt[w] = __popc(bits); flag[w] = none; }
}
""",
}


@pytest.mark.parametrize("name", sorted(VOTES))
def test_votes_lift_as_a_reduce_that_passes_the_check(tmp_path: Path, name: str) -> None:
    from cuda2nki import api

    cu = _kernel(tmp_path, VOTES[name], "kern", '"ceil_div(n, 128)"', "128", _PARAMS,
                 ["n = 300", "n = 45"])  # fmt: skip
    res = api.port(cu)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    assert any(d.code == "C2N2001" and "as reduce" in d.message for d in res.diagnostics)
    port = tmp_path / "kern.py"
    port.write_text(res.source)
    rep = api.check(cu, port, seeds=2)
    assert rep.numerics_outcome == "pass", rep


def test_a_ballot_mask_used_as_a_number_is_not_lifted(tmp_path: Path) -> None:
    from cuda2nki import api

    src = """
__global__ void kern(const float* x, int* cnt, int* flag, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        unsigned m = __ballot_sync(__activemask(), x[g] > 0.5f);
        if ((threadIdx.x & 31) == 0) { cnt[g / 32] = (int)(m & 7u); flag[g / 32] = 1; }
    }
}
"""
    cu = _kernel(tmp_path, src, "kern", '"ceil_div(n, 128)"', "128", _PARAMS)
    res = api.port(cu)
    assert res.literal or res.source is None
    why = [d.message for d in res.diagnostics if d.code == "C2N2015"]
    assert any("ballot's bit mask used as a number" in m for m in why), res.diagnostics


def test_every_lane_storing_its_warps_vote_passes_the_check(tmp_path: Path) -> None:
    """Each thread stores the vote of its warp (flat rows of 32 lanes in one block)."""
    from cuda2nki import api

    src = """
__global__ void kern(const unsigned int* bits, unsigned int* seen, unsigned int* every, int n) {
    int lane_id = threadIdx.x;
    seen[lane_id] = __any_sync(0xffffffffu, bits[lane_id]);
    every[lane_id] = __all_sync(0xffffffffu, bits[lane_id] != 0u);
}
"""
    params = (
        'bits = { shape = [128], dtype = "uint32", role = "in", range = [0, 1] }\n'
        'seen = { shape = [128], dtype = "uint32", role = "out" }\n'
        'every = { shape = [128], dtype = "uint32", role = "out" }\nn = 128'
    )
    cu = _kernel(tmp_path, src, "kern", "1", "128", params)
    res = api.port(cu)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / "kern.py"
    port.write_text(res.source)
    rep = api.check(cu, port, seeds=2)
    assert rep.numerics_outcome == "pass", rep
