"""A value-returning lambda called inside another lambda that is itself inlined at several
calls: each inlining computes the inner call afresh in its own block (its result local is
declared there), so no copy reads a result local of another copy.  The literal ports match the
SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    # the inner lambda returns from a switch (an early return); the outer one is inlined in
    # both branches of an if
    ("switch_return_inlined_in_both_branches", [64], """
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x) {
        auto at = [=](int r, int c) {
            int tag = 0;
            switch (tag) {
                case 0: return r * 4 + c;
                default: return 0;
            }
        };
        auto val = [=](int r, int c) {
            const auto o = at(r, c);
            return x[o] * 2.0f;
        };
        if (reach > 1) {
            auto v = val(t / 4, t % 4);
            y[t] = v;
        } else {
            float v = val(t / 4, t % 4);
            y[t] = v + 1.0f;
        }
    }
}"""),
    # the outer lambda is called twice in a row, the inner call is a whole right-hand side
    ("assignment_twice_in_sequence", [32], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    auto twice = [&](int i) { return x[i] + x[i]; };
    auto acc = [&](int i) {
        float s;
        s = twice(i);
        y[t] += s;
    };
    y[t] = 0.0f;
    acc(t);
    acc((t + reach) % n);
}"""),
    # a reference-capturing inner lambda with a plain return, the outer one inside a loop and
    # after it
    ("loop_and_tail_calls", [16, 4], """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;
    auto wrap = [&](int i) { return (i + n) % n; };
    auto take = [&](int i) {
        int j = wrap(i);
        return x[j];
    };
    float s = 0.0f;
    for (int d = -reach; d <= reach; ++d) {
        float v = take(t + d);
        s += v;
    }
    float last = take(t - 1);
    y[t] = s - last;
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_nested_lambda_values_port_exactly(name, block, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
