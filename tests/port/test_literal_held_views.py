"""A read through a per-thread pointer local and a direct read of the same element load once in
a literal port: the pointer's view (``p_off = (base, cp, cf)``) is spelled out in its loads, so
the reuse of repeated loads takes the earlier tile -- a struct copied to a local and read again
through a pointer, a row pointer's first element, ``*p`` of ``p = &v[i]``.  A pointer moved
after it was taken is not mistaken for the element it left.  Numbers match the interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.port.test_literal import _kernel, _matches
from tests.port.test_literal_runs import _dma_loads

#: name -> (source, params, the input of the counted run (n = 64: one block), its loads)
CASES = {
    "struct_copy_then_pointer": (
        """
struct Span { int first; int count; };
__global__ void k(const Span* spans, float* mean, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Span s = spans[i];
        const Span* p = spans + i;
        mean[i] = (float)s.first / (float)(p->count > 0 ? p->count : 1);
    }
}
""",
        'spans = { shape = ["n", 2], dtype = "int32", role = "in", range = [0, 9] }\n'
        'mean = { shape = ["n"], dtype = "float32", role = "out" }\nn = 100',
        ("spans", np.arange(128, dtype=np.int32).reshape(64, 2)),
        2,  # first and count once each, not count twice
    ),
    "row_pointer_head": (
        """
__global__ void k(const float* m, float* out, int n, int w) {
    int r = threadIdx.x + blockIdx.x * blockDim.x;
    if (r >= n) return;
    const float* row = m + r * w;
    out[r] = row[0] * 2.0f - m[r * w] + row[w - 1];
}
""",
        'm = { shape = ["n", "w"], dtype = "float32", role = "in" }\n'
        'out = { shape = ["n"], dtype = "float32", role = "out" }\nn = 70\nw = 5',
        ("m", np.arange(64 * 5, dtype=np.float32).reshape(64, 5)),
        2,  # the row's first and last elements
    ),
    "address_of_element": (
        """
__global__ void k(const int* v, int* out, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        const int* p = &v[g];
        int twice = v[g] * 2;
        out[g] = *p + twice;
    }
}
""",
        'v = { shape = ["n"], dtype = "int32", role = "in", range = [-50, 50] }\n'
        'out = { shape = ["n"], dtype = "int32", role = "out" }\nn = 90',
        ("v", np.arange(64, dtype=np.int32)),
        1,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_read_through_a_pointer_reuses_the_direct_read(tmp_path: Path, name: str) -> None:
    from cuda2nki import api

    src, params, (tensor, data), expected = CASES[name]
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 64)"', "64", params, ["n = 64", "n = 3"])
    _matches(cu, tmp_path)
    port = api.port(cu, lowering="literal").source
    assert port is not None
    assert _dma_loads(port, {tensor: data}) == expected


def test_a_pointer_moved_after_it_was_taken_reads_its_new_element(tmp_path: Path) -> None:
    src = """
__global__ void k(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float* p = a + i;
        float first = *p;
        p = p + n;
        out[i] = first + *p + a[i];
    }
}
"""
    params = (
        'a = { shape = ["2 * n"], dtype = "float32", role = "in" }\n'
        'out = { shape = ["n"], dtype = "float32", role = "out" }\nn = 70'
    )
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 64)"', "64", params, ["n = 64", "n = 5"])
    _matches(cu, tmp_path)
