"""Goldens of the NKI-library adapter (``bench.public_nki_library``) follow the kernels'
documented contracts."""

from __future__ import annotations

import numpy as np
import pytest

from bench import public_nki_library as pl


@pytest.mark.parametrize(
    "n, c, w, k, pad, stride", [(1, 2, 9, 3, (1, 2), 1), (2, 3, 11, 4, (0, 0), 3)]
)
def test_depthwise_conv1d_golden_is_a_per_channel_cross_correlation(n, c, w, k, pad, stride):
    args, (ref,) = pl._depthwise_conv1d(n, c, w, k, pad, stride)(np.random.default_rng(0))
    x, f = args["img_ref"], args["filter_ref"]
    assert args["feature_group_count"] == c and args["stride"] == (1, stride)
    q = (w + sum(pad) - k) // stride + 1
    assert ref.shape == (n, c, 1, q)
    xp = np.concatenate([np.zeros((n, c, 1, pad[0])), x, np.zeros((n, c, 1, pad[1]))], -1)
    for b in range(n):
        for ch in range(c):
            for j in range(q):
                want = sum(xp[b, ch, 0, j * stride + s] * f[ch, 0, 0, s] for s in range(k))
                assert np.isclose(ref[b, ch, 0, j], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batched", [False, True])
def test_rope_hf_backward_golden_is_the_adjoint_of_the_forward(batched):
    """<rope(q), k> == <q, rope_backward(k)> for the same angles (q and k of one shape): the
    backward golden applies the transpose of the forward rotation, not the rotation itself."""
    shape = (2, 3, 3, 4, 8)
    fwd, bwd = (
        pl._rope_hf(*shape[:2], *shape[2:], batched=batched, backward=b)(np.random.default_rng(1))
        for b in (False, True)
    )
    (x_args, x_refs), (g_args, g_refs) = fwd, bwd
    np.testing.assert_array_equal(x_args["cos"], g_args["cos"])  # same seed, same angles
    q, k = x_args["q"], x_args["k"]
    lhs = float((x_refs[0] * k).sum())  # <rope(q), k>
    rhs = float((q * g_refs[1]).sum())  # <q, rope_backward(k)>
    assert np.isclose(lhs, rhs, rtol=1e-4), (lhs, rhs)
    assert not np.isclose(lhs, float((q * x_refs[1]).sum()), rtol=1e-2)  # <q, rope(k)> differs
    assert x_args["backward"] is False and g_args["backward"] is True
