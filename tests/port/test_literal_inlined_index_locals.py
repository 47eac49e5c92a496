"""Index arithmetic that is not affine in the thread, inside an inlined device function: a local
of the function classified thread-affine that takes such a value (``lane = t & 31``,
``pos = 2 * t - (t & (n - 1))`` then ``pos += n``) is lowered again as an index local of that
function -- never refused, whether the function is called once, twice or from another one, and
whether the local is declared in it or is one of its parameters; a float parameter passed an
index value is a per-thread value (float coordinates of a texture-style fetch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

TARGETS = ["nki", "legacy"]

_KERNEL = (
    "__global__ void k(const float* x, float* y, int n) {\n"
    "    __shared__ float s[256];\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float v = i < n ? x[i] : 0.0f;\n"
    "    float r = {call};\n"
    "    if (i < n) y[i] = r;\n"
    "}\n"
)

#: device functions whose locals hold index values that are not affine in the thread
HELPERS = {
    # a segmented scan over groups of 32 threads: the lane is a bit mask of the thread index
    "lane_by_mask": (
        "__device__ float seg_scan(float* buf, float v, unsigned int t) {\n"
        "    const int W = 32;\n"
        "    int lane = t & (W - 1);\n"
        "    buf[t] = v;\n"
        "    __syncthreads();\n"
        "    for (int d = 1; d < W; d *= 2) {\n"
        "        float o = 0.0f;\n"
        "        if (lane >= d) o = buf[t - d];\n"
        "        __syncthreads();\n"
        "        if (lane >= d) { v += o; buf[t] = v; }\n"
        "        __syncthreads();\n"
        "    }\n"
        "    return v;\n"
        "}\n",
        "seg_scan(s, v, threadIdx.x)",
    ),
    # a slot computed with a mask, then moved: assigned twice, so classified by the fixed point
    "slot_reassigned": (
        "__device__ float padded(float* buf, float v, unsigned int size) {\n"
        "    unsigned int slot = 2 * threadIdx.x - (threadIdx.x & (size - 1));\n"
        "    buf[slot] = 0.0f;\n"
        "    slot += size;\n"
        "    buf[slot] = v;\n"
        "    __syncthreads();\n"
        "    return buf[slot - 1] + buf[slot];\n"
        "}\n",
        "padded(s, v, 4)",
    ),
    # a remainder re-assigned, the function inlined twice with other arguments
    "remainder_twice": (
        "__device__ float pick(const float* src, int base, int m) {\n"
        "    int r = threadIdx.x % m;\n"
        "    r = r * 2 + 1;\n"
        "    return src[base + r];\n"
        "}\n",
        "pick(x, 0, 3) - pick(x, 4, 5)",
    ),
    # the function holding the local is itself called from another inlined function
    "nested_helpers": (
        "__device__ int group_of(int t, int g) {\n"
        "    int q = t >> 2;\n"
        "    q = q & (g - 1);\n"
        "    return q;\n"
        "}\n"
        "__device__ float weigh(float v) {\n"
        "    int grp = group_of(threadIdx.x, 8);\n"
        "    return v * (float)(grp + 1);\n"
        "}\n",
        "weigh(v)",
    ),
    # a parameter re-assigned a remainder (the argument is the thread's index)
    "parameter_reassigned": (
        "__device__ float wrapped(const float* a, int j, int m) {\n"
        "    j = j % m;\n"
        "    j = j * 2;\n"
        "    return a[j];\n"
        "}\n",
        "wrapped(x, i, 50) + wrapped(x, threadIdx.x + 3, 7)",
    ),
    # float coordinates taken from thread-affine integers, clamped (a texture-style fetch)
    "float_coordinates": (
        "__device__ float at(const float* img, int n, float u) {\n"
        "    float c = u;\n"
        "    int k = (int)floorf(c);\n"
        "    return img[min(max(k, 0), n - 1)];\n"
        "}\n"
        "__device__ float box(const float* img, int n, int centre) {\n"
        "    float t = 0.0f;\n"
        "    for (int d = -2; d <= 2; d++) t += at(img, n, d + centre);\n"
        "    return t;\n"
        "}\n",
        "box(x, n, i)",
    ),
}


def _port(name: str, target: str, tmp: Path):
    helper, call = HELPERS[name]
    params = {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 300}
    shapes = [{"n": 300}, {"n": 200}]
    bdict = grid_binding(["ceil_div(n, 128)"], params, shapes, block=128)
    cu = tmp / f"{name}.cu"
    cu.write_text(helper + _KERNEL.replace("{call}", call))
    return run_literal_exactly(cu, bdict, target, tmp)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(HELPERS))
def test_inlined_index_locals_port_literally(name, target, tmp_path) -> None:
    run, points = _port(name, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
