"""Shuffled values name their source lane by a fresh symbol until the end of the symbolic run;
values that survive (no completed ladder folded them away) must come out as the CUDA lanes."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict, generate_inputs
from cuda2nki.frontend import parse_source
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.lift import lift_kernel


def _lanes(n: int) -> np.ndarray:
    return np.arange(n) % 32


def _down1(x: np.ndarray) -> np.ndarray:
    lane = _lanes(x.size)
    nb = np.where(lane < 31, np.roll(x, -1), x)
    return nb - x


def _xor(x: np.ndarray, k: int) -> np.ndarray:
    return x[np.arange(x.size) ^ k]


CASES = [
    (
        "down_by_one_neighbour",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    float nb = __shfl_down_sync(0xffffffff, v, 1);
    y[i] = nb - v;
}""",
        _down1,
    ),
    (
        "partial_xor_ladder_stored",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = x[i];
    s += __shfl_xor_sync(0xffffffff, s, 16);
    s += __shfl_xor_sync(0xffffffff, s, 8);
    y[i] = s;
}""",
        lambda x: (lambda s: s + _xor(s, 8))(x + _xor(x, 16)),
    ),
    (
        "shuffle_of_a_shuffle",
        """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = __shfl_xor_sync(0xffffffff, 2.0f * x[i], 1);
    float b = __shfl_xor_sync(0xffffffff, a + x[i], 2);
    y[i] = b;
}""",
        lambda x: _xor(_xor(2 * x, 1) + x, 2),
    ),
]


def _lift(name: str, src: str):
    b = binding_from_dict(
        {
            "kernel": "k",
            "launch": {"grid": ["n / 64"], "block": [64]},
            "params": {
                "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "y": {"shape": ["n"], "dtype": "float32", "role": "out"},
                "n": 256,
            },
        },
        path=f"<{name}>",
    )
    return b, lift_kernel(parse_source(src, f"{name}.cu"), "k", b)


@pytest.mark.parametrize(("name", "src", "meaning"), CASES, ids=[c[0] for c in CASES])
def test_surviving_shuffles_are_refused_or_exact(name, src, meaning) -> None:
    b, res = _lift(name, src)
    if not res.claimed:  # stores of per-lane shuffle results have no intent form yet
        assert res.diagnostics[-1].code.startswith("C2N20")
        return
    resolved = b.resolve(b.test_points()[0])
    inputs = generate_inputs(resolved, seed=3)
    got = evaluate(res.kernel_ir, {k: v.copy() for k, v in inputs.items()}, dict(resolved.scalars))
    want = meaning(inputs["x"].astype(np.float64))
    np.testing.assert_allclose(np.asarray(got["y"], np.float64), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("name", "src", "lanes"),
    [
        (CASES[1][0], CASES[1][1], lambda t: {t, t ^ 16, t ^ 8, t ^ 24}),
        (CASES[2][0], CASES[2][1], lambda t: {t ^ 2, t ^ 3}),
    ],
)
def test_lane_symbols_are_substituted_at_the_end(name, src, lanes) -> None:
    from cuda2nki.lift import values as V
    from cuda2nki.lift.symexec import execute

    tu = parse_source(src, f"{name}.cu")
    prog = execute(tu, tu.kernels[0], (64, 1, 1))
    (st,) = prog.stores
    assert not any(str(a).startswith("%lane@") for a in V.index_atoms(st.value))
    for t in range(64):
        env = {"threadIdx.x": t, "blockIdx.x": 0}
        read = {ld.index.evaluate(env) for ld in V.loads(st.value)}
        assert read == lanes(t), t
