"""A narrower view of one element (``(const int8_t*)&a[i]``) read at constant indices inside the
element is an access of ``a[i]``: the pointer gets its shape from the element's index."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents

LAUNCH = {"grid": ["ceil_div(n, 128)"], "block": [128]}


def _scan(params: str, body: str):
    src = f"__global__ void k({params}, int* out, int n) {{ {body} }}"
    return extents(parse_source(src, "k.cu").function("k"), LAUNCH)


GID = "int i = blockIdx.x * blockDim.x + threadIdx.x;"


@pytest.mark.parametrize(
    ("params", "body", "shape"),
    [
        (
            "const int* a",
            f"{GID} if (i < n) {{ const signed char* v = (const signed char*)&a[i];"
            " out[i] = v[0] * v[3]; }",
            ("n",),
        ),
        (
            "const unsigned* w",
            f"{GID} if (i < n) {{ int s = 0; for (int j = 0; j < 4; j++) {{"
            " const unsigned char* b = (const unsigned char*)&w[i * 4 + j];"
            " s += b[0] + b[1] + b[2] + b[3]; } out[i] = s; }",
            ("n", 4),
        ),
        (
            "const int* a",
            f"{GID} if (i < n) out[i] = ((const unsigned char*)&a[2 * i + 1])[2];",
            ("n", 2),
        ),
        (
            "const int* a",
            f"{GID} if (i < n) out[i] = *(const short*)&a[i];",
            ("n",),
        ),
        (
            "const long long* q",
            "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;"
            " i += blockDim.x * gridDim.x)"
            " { const unsigned char* b = reinterpret_cast<const unsigned char*>(q + i);"
            " out[i] = b[7]; }",
            ("n",),
        ),
    ],
    ids=["local", "loop", "direct", "deref", "pointer-sum"],
)
def test_a_constant_byte_of_an_element_reads_that_element(
    params: str, body: str, shape: tuple
) -> None:
    got = _scan(params, body)
    name = params.split("*")[-1].strip()
    assert got[name].shape == shape and got[name].role == "in"


@pytest.mark.parametrize(
    "read",
    [
        "v[j]",  # a computed index
        "v[4]",  # past the element
    ],
)
def test_other_uses_of_a_view_stay_unsized(read: str) -> None:
    body = (
        f"{GID} int j = out[0]; if (i < n) {{ const signed char* v = (const signed char*)&a[i];"
        f" out[i] = {read}; }}"
    )
    assert _scan("const int* a", body)["a"].shape is None


def test_a_view_reassigned_to_another_pointer_is_no_view() -> None:
    body = (
        f"{GID} if (i < n) {{ const signed char* v = (const signed char*)&a[i];"
        " v = (const signed char*)c; out[i] = v[0]; }"
    )
    got = _scan("const int* a, const signed char* c", body)
    assert got["c"].shape == (1,)  # v[0] reads c[0], not a byte of a[i]
