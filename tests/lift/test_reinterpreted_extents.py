"""A pointer cast to a scalar (or vector) type of the same width, or a whole multiple of it,
keeps its offsets: ``(unsigned*)floats`` reads one float's bits per element, ``(int4*)floats``
four floats, ``(long long*)ints`` two ints."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents

LAUNCH = {"grid": ["ceil_div(n, 128)"], "block": [128]}
GID = "int i = blockIdx.x * blockDim.x + threadIdx.x;"


def _scan(params: str, body: str):
    src = f"__global__ void k({params}, int n) {{ {GID} if (i < n) {{ {body} }} }}"
    return extents(parse_source(src, "k.cu").function("k"), LAUNCH)


@pytest.mark.parametrize(
    ("params", "body", "name", "shape"),
    [
        ("float* buf, int* out", "unsigned* f = (unsigned*)buf; out[i] = f[i];", "buf", ("n",)),
        ("float* buf", "atomicAdd((unsigned int*)(buf) + i, 1u);", "buf", ("n",)),
        (
            "const int* p, float* out",
            "out[i] = __int_as_float(((const unsigned*)p)[i]);",
            "p",
            ("n",),
        ),
        (
            "const float* v, int4* out",
            "out[i] = reinterpret_cast<const int4*>(v)[i];",
            "v",
            ("n", 4),
        ),
        ("const int* p, long long* out", "out[i] = ((const long long*)p)[i];", "p", ("n", 2)),
        (
            "float* scratch, float* out",
            "float* s = scratch + 32; unsigned* flag = "
            "(unsigned*)scratch; out[i] = s[i] + (float)flag[0];",
            "scratch",
            ("32+n",),
        ),
    ],
    ids=["local", "atomic", "direct", "vector", "wider", "flag"],
)
def test_a_same_width_view_keeps_the_offsets(params: str, body: str, name: str, shape) -> None:
    assert _scan(params, body)[name].shape == shape


@pytest.mark.parametrize(
    "body",
    [
        "out[i] = (int)((const short3*)p)[i].x;",  # a vector of narrower lanes
        "out[i] = ((const char*)p + 3 * i)[0];",  # a narrower view at a computed address
    ],
    ids=["narrow-lanes", "narrow-computed"],
)
def test_other_reinterpretations_stay_unsized(body: str) -> None:
    assert _scan("const int* p, int* out", body)["p"].shape is None
