"""Shared-memory values are resolved once per distinct subexpression (a value reused by later
statements is a DAG, not a tree), and the work budget still charges what resolving the
expression as a tree costs: the same kernels are refused (C2N2015), only faster."""

from __future__ import annotations

from collections import Counter

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift import lift_kernel
from cuda2nki.lift.finalize import Finalizer


def _chain(steps: int, step: str) -> str:
    body = "\n".join(f"    v = {step};" for _ in range(steps))
    return f"""__global__ void chain(float* out, const float* in, int n) {{
    __shared__ float tile[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    float v = tile[threadIdx.x];
{body}
    if (i < n) out[i] = v;
}}
void run(float* o, const float* a, int n) {{ chain<<<(n + 63) / 64, 64>>>(o, a, n); }}
"""


@pytest.mark.parametrize(
    ("steps", "step"), [(6, "v * 0.5f + v"), (5, "fmaxf(v, v * v)"), (7, "v - v * 0.25f")]
)
def test_each_shared_subexpression_is_resolved_once(monkeypatch, steps: int, step: str):
    seen: Counter = Counter()
    real = Finalizer._resolve

    def counted(self, e):  # type: ignore[no-untyped-def]
        from cuda2nki.lift import values as V

        seen[(id(self), e, V._bounds_key())] += 1
        return real(self, e)

    monkeypatch.setattr(Finalizer, "_resolve", counted)
    tu = parse_source(_chain(steps, step), "chain.cu")
    res = lift_kernel(tu, "chain")
    assert res.claimed, res.diagnostics
    assert seen and max(seen.values()) == 1


def test_a_chain_too_large_for_the_budget_is_still_refused():
    tu = parse_source(_chain(22, "v * 0.5f + v"), "chain.cu")
    res = lift_kernel(tu, "chain")
    assert not res.claimed
    assert "C2N2015" in {d.code for d in res.diagnostics}
