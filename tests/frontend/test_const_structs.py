"""A ``__constant__`` struct of device buffers and sizes that the host fills
(``cudaMemcpyToSymbol(cp, &h, sizeof(h))``) is the kernel's input: each member a kernel reads
becomes its parameter (a buffer a tensor, a number a scalar) and the launch passes it."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding
from cuda2nki.simt import run_kernel

HEAD = """
typedef struct { const float* a; float* b; int n; float s; } Params;
__constant__ Params cp;
"""

KERNELS = {
    "member reads": "if (i < cp.n) cp.b[i] = cp.s * cp.a[i];",
    "through locals": "const float* src = cp.a; float* dst = cp.b; if (i < cp.n) dst[i] = cp.s * src[i];",
    "grid-stride": "for (int j = i; j < cp.n; j += blockDim.x * gridDim.x) cp.b[j] = cp.s * cp.a[j];",
}

HOST = """
int main() {
    int n = 1000;
    Params h; h.n = n; h.s = 0.5f;
    cudaMalloc((void**)&h.a, n * sizeof(float));
    cudaMalloc((void**)&h.b, n * sizeof(float));
    cudaMemcpyToSymbol(cp, &h, sizeof(Params));
    scale<<<(n + 255) / 256, 256>>>();
}
"""


def _src(body: str) -> str:
    kernel = "__global__ void scale() { int i = blockIdx.x * blockDim.x + threadIdx.x; BODY }"
    return HEAD + kernel.replace("BODY", body) + HOST


@pytest.mark.parametrize("body", list(KERNELS.values()), ids=list(KERNELS))
def test_members_a_kernel_reads_become_its_parameters(body: str) -> None:
    tu = parse_source(_src(body), "k.cu")
    (k,) = tu.kernels
    assert [p.name for p in k.params] == ["cp__a", "cp__b", "cp__n", "cp__s"]
    assert not any(g.name.startswith("cp__") for g in tu.globals)
    (site,) = tu.launch_sites
    assert [a.name for a in site.args] == ["cp__a", "cp__b", "cp__n", "cp__s"]  # type: ignore[attr-defined]
    a = np.arange(300, dtype=np.float32)
    args = {"cp__a": a, "cp__b": np.zeros(300, np.float32), "cp__n": 290, "cp__s": 0.5}
    out = run_kernel(tu, "scale", grid=(2,), block=(256,), args=args)["cp__b"]
    np.testing.assert_allclose(out, np.where(np.arange(300) < 290, 0.5 * a, 0))
    partial, diags = infer_binding(parse_source(_src(body), "k.cu"), "scale")
    assert partial["params"]["cp__b"]["role"] == "out", [d.message for d in diags]
    assert partial["params"]["cp__b"]["shape"] == ["cp__n"]
    bnd, diags = binding_from_inference(parse_source(_src(body), "k.cu"), "scale")
    assert bnd is not None, [d.message for d in diags]


def test_a_member_a_device_function_reads_stays_global() -> None:
    src = HEAD + (
        "__device__ float sc() { return cp.s; }\n"
        "__global__ void scale() { int i = threadIdx.x; if (i < cp.n) cp.b[i] = sc() * cp.a[i]; }"
    )
    tu = parse_source(src + "void f() { Params h; cudaMemcpyToSymbol(cp, &h, sizeof(h)); }", "k.cu")
    (k,) = tu.kernels
    assert [p.name for p in k.params] == ["cp__a", "cp__b", "cp__n"]
    assert [g.name for g in tu.globals if g.name.startswith("cp__")] == ["cp__s"]


@pytest.mark.parametrize(
    "body",
    ["cp.n = 0;", "cp.b[threadIdx.x] = 1.0f; cp.s += 1.0f;"],
    ids=["a member assigned", "a member incremented"],
)
def test_a_kernel_that_changes_a_member_keeps_the_globals(body: str) -> None:
    src = HEAD + "__global__ void k() { " + body + " }\n"
    src += "void f() { Params h; cudaMemcpyToSymbol(cp, &h, sizeof(h)); }"
    (k,) = parse_source(src, "k.cu").kernels
    assert k.params == ()


def test_a_struct_the_host_never_writes_stays_global() -> None:
    src = HEAD + "__global__ void k() { cp.b[threadIdx.x] = cp.s; }\n"
    (k,) = parse_source(src, "k.cu").kernels
    assert k.params == ()


SCATTER = """
struct Table { const int* slot; float* bins; int n; float w; };
__constant__ Table tab;
__global__ void spread() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < tab.n) atomicAdd(&tab.bins[tab.slot[i]], tab.w);
}
int main() {
    int n = 5000;
    Table h;
    h.n = n;
    h.w = 0.25f;
    int* s;
    cudaMalloc(&s, n * sizeof(int));
    h.slot = s;
    cudaMalloc((void**)&h.bins, 64 * sizeof(float));
    cudaMemcpyToSymbol(tab, &h, sizeof(Table));
    spread<<<(n + 127) / 128, 128>>>();
}
"""


def test_members_take_the_host_structs_values_and_allocations() -> None:
    partial, diags = infer_binding(parse_source(SCATTER, "k.cu"), "spread")
    p = partial["params"]
    assert p["tab__bins"]["shape"] == [64], (p, [d.message for d in diags])
    assert p["tab__w"] in (0.25, {"value": 0.25}) and p["tab__n"] in (5000, {"value": 5000})
    assert p["tab__slot"]["shape"] == ["tab__n"]
    bnd, diags = binding_from_inference(parse_source(SCATTER, "k.cu"), "spread")
    assert bnd is not None, [d.message for d in diags]
