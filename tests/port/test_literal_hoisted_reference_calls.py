"""A call that updates a caller's local through a reference or pointer and whose value is used
inside a larger expression (a random draw scaled to an index, a counter bumped inside a sum, a
call in an array index): the literal lowering's scalarisation takes it out into a temporary
declared before the statement (:mod:`cuda2nki.lift.literal.hoistrefs`), then inlines it with
the reference aliasing the local.  The ports match the SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import port_flat_kernel_literally, run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("scaled_random_draw_by_pointer", [64], """
__device__ float draw(unsigned int* state) {
    const unsigned int m = 2147483648u;
    *state = (1103515245u * (*state) + 12345u) % m;
    return (float)(*state) / (float)m;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned int seed = t * 7u + 1u;
    float acc = 0.0f;
    for (int r = 0; r < reach + 2; ++r) {
        int j = (int)(draw(&seed) * (n - 1)) + 1;
        acc += x[j % n];
    }
    y[t] = acc;
}"""),
    ("counter_by_reference_in_a_sum", [32, 2], """
__device__ int bump(int& c, int by) { c += by; return c * 2; }
""", """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int c = t % 5;
    float v = x[t] + (float)bump(c, reach) * 0.25f;
    v = v - (float)(bump(c, 1) + reach);
    y[t] = v + (float)c;
}"""),
    ("call_in_an_index_and_a_condition", [128], """
__device__ int step(int* at, int n) { *at = (*at + 3) % n; return *at; }
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int p = t;
    float s = x[step(&p, n)];
    if (x[step(&p, n)] > 0.0f) s += 1.0f;
    y[t] = s + (float)p;
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "before", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_hoisted_reference_calls_port_exactly(name, block, before, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(before + _HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


@pytest.mark.parametrize(
    "expr",
    ["(float)bump(c, 1) + (float)c", "(float)(c + bump(c, 2))", "(float)(bump(c, 1) * bump(c, 2))"],
)
def test_a_call_beside_a_read_of_what_it_changes_stays_refused(expr, tmp_path) -> None:
    """C leaves the order of the call and the other read (or call) unspecified."""
    cu = tmp_path / "k.cu"
    cu.write_text(
        KERNELS[1][2] + _HEAD + "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    int c = t;\n    if (t < n) y[t] = x[t] + {expr};\n}}\n"
    )
    res = port_flat_kernel_literally(cu)
    assert res.source is None
    assert any("written in an expression" in d.message for d in res.diagnostics)
