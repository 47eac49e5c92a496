"""Block-wide shared-memory trees read at element 0 resolve structurally (one fold, resolved once
for a symbolic element) and keep their exact meaning when the tree is irregular."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict, generate_inputs
from cuda2nki.frontend import parse_source
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.lift import finalize as F
from cuda2nki.lift import lift_kernel

TREE = """
__global__ void k(const float* x, float* part, int n) {
    extern __shared__ float buf[];
    unsigned int t = threadIdx.x;
    unsigned int g = blockIdx.x * blockDim.x + t;
    buf[t] = g < n ? x[g] : INIT;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s && s != SKIP) buf[t] = COMBINE(buf[t], buf[t + s]);
        __syncthreads();
    }
    if (t == 0) part[blockIdx.x] = buf[0];
}"""


def _lift(bs: int, combine: str, init: str, skip: int):
    src = TREE.replace("COMBINE", combine).replace("INIT", init).replace("SKIP", str(skip))
    src = "#define ADD(a, b) ((a) + (b))\n" + src
    b = binding_from_dict(
        {
            "kernel": "k",
            "launch": {"grid": [f"ceil_div(n, {bs})"], "block": [bs], "shared_bytes": 4 * bs},
            "params": {
                "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "part": {"shape": [f"ceil_div(n, {bs})"], "dtype": "float32", "role": "out"},
                "n": 3 * bs - 5,
            },
        },
        path="<tree>",
    )
    return b, lift_kernel(parse_source(src, "tree.cu"), "k", b)


def _check(b, res, want) -> None:
    assert res.claimed, [d.message for d in res.diagnostics]
    resolved = b.resolve(b.test_points()[0])
    inputs = generate_inputs(resolved, seed=5)
    got = evaluate(res.kernel_ir, {k: v.copy() for k, v in inputs.items()}, dict(resolved.scalars))
    np.testing.assert_allclose(
        np.asarray(got["part"], np.float64), want(inputs["x"].astype(np.float64)), rtol=1e-5
    )


def _blocks(x: np.ndarray, bs: int, fill: float) -> np.ndarray:
    pad = np.full(-(-x.size // bs) * bs, fill)
    pad[: x.size] = x
    return pad.reshape(-1, bs)


@pytest.mark.parametrize(
    ("combine", "init", "red"), [("ADD", "0.0f", np.sum), ("fmaxf", "-1e30f", np.max)]
)
def test_regular_tree_is_one_fold_and_cheap(monkeypatch, combine, init, red) -> None:
    made: list = []
    init_fn = F.Finalizer.__init__

    def record(self, prog):
        init_fn(self, prog)
        made.append(self)

    monkeypatch.setattr(F.Finalizer, "__init__", record)
    b, res = _lift(512, combine, init, skip=0)
    fill = 0.0 if combine == "ADD" else -1e30
    _check(b, res, lambda x: red(_blocks(x, 512, fill), axis=1))
    # resolved once for a symbolic element, not thread by thread (511 reads)
    assert sum(F.BUDGET_UNITS - f.units_left for f in made) < 5_000


def test_a_tree_that_skips_a_level_keeps_its_meaning() -> None:
    # s = 32 is skipped: element 0 sums elements 0..31 and 64..95 of each block of 128
    b, res = _lift(128, "ADD", "0.0f", skip=32)

    def want(x):
        blk = _blocks(x, 128, 0.0)
        return blk[:, :32].sum(1) + blk[:, 64:96].sum(1)

    _check(b, res, want)
