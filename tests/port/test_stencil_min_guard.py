"""A tap loop whose tail is masked by a guard against a clipped width (``t < min(K, n - i)``)
is claimed by the stencil recogniser, but its port loads the whole halo window: the last tile's
DMA reads past the end of the input.  Pinned as a known defect until the window load is clipped
by the guard (the corpus form of this kernel, with the min in the loop bound, ports literally
and correctly)."""

from __future__ import annotations

import shutil

import pytest

from tests.port.acceptance import CORPUS, check_kernel

_GUARDED = """\
#define NTAPS 7
#define clip_min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })

template <typename T>
__constant__ T taps[NTAPS] = {T(0.05), T(0.1), T(0.2), T(0.3), T(0.2), T(0.1), T(0.05)};

template <typename T>
__global__ void fir_taps_template(const T* const __restrict x, T* const __restrict y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T acc = 0;
    const int w = clip_min(NTAPS, n - i);
    for (int t = 0; t < NTAPS; ++t)
        if (t < w) acc += taps<T>[t] * x[i + t];
    y[i] = acc;
}

void launch(const float* x, float* y, int n) { fir_taps_template<float><<<(n + 255) / 256, 256>>>(x, y, n); }
"""


@pytest.mark.xfail(
    strict=True,
    reason="the stencil port loads the halo window unclipped by a min-width guard (C2N3019)",
)
def test_a_min_width_tap_guard_ports_within_bounds(tmp_path) -> None:
    src = tmp_path / "fir_taps_template.cu"
    src.write_text(_GUARDED)
    shutil.copy(CORPUS / "misc" / "fir_taps_template.toml", src.with_suffix(".toml"))
    out = check_kernel(src, "nki", tmp_path, max_points=2)
    assert out.status == "match", out
