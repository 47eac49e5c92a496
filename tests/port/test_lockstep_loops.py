"""For statements that step several variables together (``for (int a = a0, b = b0; a <= e;
a += sa, b += sb)``) lift as one counted loop: each variable is its start plus the trip count
times its step.  The samples-style tiled matmul, a GEMV walking a flat offset beside the column
and a column sum walking one row per step port through recognisers on both targets; loops
where that reading would be wrong are left to the literal lowering."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]
KERNELS = {
    "linalg/matmul_lockstep_tiles": "contract",
    "linalg/gemv_lockstep": "contract",
    "reduce/col_sum_lockstep": "reduce",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(KERNELS))
def test_ports_through_a_recogniser(rel: str, target: str, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == KERNELS[rel]


_BINDING = {
    "kernel": "k",
    "launch": {"grid": ["ceil_div(m, 64)"], "block": [64]},
    "params": {
        "y": {"shape": ["m"], "dtype": "float32", "role": "out"},
        "A": {"shape": ["m", "n"], "dtype": "float32", "role": "in"},
        "m": 70,
        "n": 20,
    },
}
_KERNEL = """
__global__ void k(float* y, const float* A, int m, int n) {{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {{
        float acc = 0.0f;
        for (int j = 0, p = row * n; {cond}; {step}) {{ {body} }}
        y[row] = acc;
    }}
}}
"""


@pytest.mark.parametrize(
    ("cond", "step", "body", "lifted"),
    [
        ("j < n", "++j, ++p", "acc += A[p];", True),
        ("j < n", "j += 1, p += 1", "acc += A[p];", True),
        ("j < n", "++j, ++p", "acc += A[p]; p += 0;", False),  # the follower moves in the body
        ("j < n && p < m * n", "++j, ++p", "acc += A[p];", False),  # two variables tested
        ("j < n", "++j, p *= 1", "acc += A[p];", False),  # not an additive step
    ],
)
def test_only_lockstep_loops_are_rewritten(cond, step, body, lifted, tmp_path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(_KERNEL.format(cond=cond, step=step, body=body))
    res = port_file(path, binding=binding_from_dict(_BINDING), target="nki")
    assert res.source is not None
    assert res.literal != lifted, [d.message for d in res.diagnostics]
