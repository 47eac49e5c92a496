"""A pointer the kernel reads where symbolic execution records no load (staged into shared
memory, read through a local alias, updated by a compound assignment) and also writes is
``inout``; a pointer only stored to stays ``out``."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.readback import reads_memory, with_reads

READS = {
    "staged-in-shared": """
__global__ void k(float* buf, int w) {
    __shared__ float t[32];
    t[threadIdx.x] = buf[w + threadIdx.x];
    __syncthreads();
    buf[threadIdx.x] = t[31 - threadIdx.x];
}""",
    "local-alias": """
__global__ void k(float* buf, int w) {
    float* row = buf + blockIdx.x * w;
    float v = row[threadIdx.x];
    buf[blockIdx.x * w + threadIdx.x] = v * 2.0f;
}""",
    "alias-assigned-later": """
__global__ void k(float* buf, int w) {
    float* p;
    p = &buf[blockIdx.x * w];
    buf[threadIdx.x] = *(p + 1);
}""",
    "compound-assignment": """
__global__ void k(float* buf, int w) {
    buf[blockIdx.x * w + threadIdx.x] -= 1.0f;
}""",
    "member-of-an-element": """
struct P { float x, y; };
__global__ void k(P* buf, int w) {
    float a = buf[threadIdx.x].y;
    buf[threadIdx.x + w].x = a;
}""",
}

WRITES_ONLY = {
    "plain-store": """
__global__ void k(float* buf, int w) {
    buf[blockIdx.x * w + threadIdx.x] = 1.0f;
}""",
    "member-store": """
struct P { float x, y; };
__global__ void k(P* buf, int w) {
    buf[threadIdx.x].x = (float)w;
    buf[threadIdx.x].y = 0.0f;
}""",
    "deref-store-through-alias": """
__global__ void k(float* buf, int w) {
    float* p = buf + w;
    *p = 3.0f;
    p[threadIdx.x] = 2.0f;
}""",
}

_WRITE = [("w", None, None, ())]


def _kernel(src: str):
    return next(f for f in parse_source(src, "k.cu").kernels if f.name == "k")


@pytest.mark.parametrize("spelling", sorted(READS))
def test_a_read_the_syntax_shows_makes_a_written_pointer_inout(spelling: str) -> None:
    fn = _kernel(READS[spelling])
    assert reads_memory(fn, "buf")
    assert {a[0] for a in with_reads(fn, "buf", _WRITE)} == {"r", "w"}


@pytest.mark.parametrize("spelling", sorted(WRITES_ONLY))
def test_stores_alone_keep_a_pointer_out(spelling: str) -> None:
    fn = _kernel(WRITES_ONLY[spelling])
    assert not reads_memory(fn, "buf")
    assert with_reads(fn, "buf", _WRITE) == _WRITE
