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
