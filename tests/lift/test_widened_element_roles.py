"""Elements reached through a widened address (``reinterpret_cast<float4*>(&p[i])[0]``) count as
accesses of ``p`` in a device helper: the helper is then followed, so the kernel's pointer gets
its role and its shape from the helper's accesses (not 'never accessed')."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.calleeroles import callee_roles
from cuda2nki.lift.extents import extents

READS = {
    "cast": "float4 t = reinterpret_cast<const float4*>(&src[i * 4])[0]; dst[i] = t.x + t.w;",
    "c-style": "float2 t = ((const float2*)&src[2 * i])[0]; dst[i] = t.x * t.y;",
    "deref": "float4 t = *reinterpret_cast<const float4*>(&src[4 * i]); dst[i] = t.y;",
}


@pytest.mark.parametrize("body", READS.values(), ids=READS.keys())
def test_a_widened_read_in_a_helper_is_a_read(body: str) -> None:
    src = f"__device__ void h(const float* src, float* dst, int i) {{ {body} }}"
    role = callee_roles(parse_source(src, "h.cu"))
    assert role("h", 0) == "r"
    assert role("h", 1) == "w"


WRITES = {
    "cast": "reinterpret_cast<float4*>(&out[4 * j])[0] = make_float4(v, v, v, v);",
    "c-style": "((float2*)&out[j * 2])[0] = make_float2(v, v);",
    "deref": "*reinterpret_cast<float4*>(&out[j * 4]) = make_float4(v, 0.f, 0.f, v);",
}


@pytest.mark.parametrize("body", WRITES.values(), ids=WRITES.keys())
def test_a_widened_write_in_a_helper_is_a_write(body: str) -> None:
    src = f"__device__ void put(float* out, int j, float v) {{ {body} }}"
    assert callee_roles(parse_source(src, "h.cu"))("put", 0) == "w"


def test_an_address_only_handed_on_is_still_no_access() -> None:
    src = "__device__ void at(float* p, int i, float** where) { *where = &p[i]; }"
    assert callee_roles(parse_source(src, "h.cu"))("at", 0) == ""


HELPER = """
__device__ void load4(const float* a, float* tile, int row, int col, int width) {
    float4 t = reinterpret_cast<const float4*>(&a[row * width + col * 4])[0];
    tile[0] = t.x; tile[1] = t.y; tile[2] = t.z; tile[3] = t.w;
}
"""


@pytest.mark.parametrize(
    "call",
    [
        "load4(a, buf, r, threadIdx.x, w);",
        "load4(a + r * w, buf, 0, threadIdx.x, w);",
    ],
)
def test_the_kernel_pointer_gets_its_shape_from_the_widened_helper(call: str) -> None:
    src = HELPER + (
        "__global__ void k(const float* a, float* y, int rows, int w) {"
        " float buf[4]; int r = blockIdx.x; if (r < rows && threadIdx.x * 4 < w) {"
        f" {call} y[r * w + threadIdx.x] = buf[0] + buf[3]; }} }}"
    )
    tu = parse_source(src, "k.cu")
    launch = {"grid": ["rows"], "block": [32]}
    got = extents(tu.function("k"), launch, None, callee_roles(tu), tu.function)
    assert got["a"].role == "in"
    assert got["a"].shape == ("3+rows*w",)  # the last float4 starts below w
