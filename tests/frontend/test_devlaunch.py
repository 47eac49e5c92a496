"""Device-side launches lower to Launch nodes; device-runtime calls keep their names."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find
from cuda2nki.simt import run_kernel_full

SRC = """\
__global__ void child(int* data, int v) { data[threadIdx.x] = v; }

__global__ void parent(int* data, int n, int depth) {
    if (threadIdx.x == 0 && depth > 0) {
        {launch}
        {sync}
    }
    data[n + blockIdx.x] = depth;
}
"""
LAUNCHES = [
    ("child<<<1, 32>>>(data, blockIdx.x);", "child", 2, None, 5),
    ("child<<<dim3(2), dim3(16, 1), 0>>>(&data[32 * blockIdx.x], 7);", "child", 2, None, 5),
    (
        "cudaStream_t s;\n        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n"
        "        parent<<<1, 1, 0, s>>>(data, n, depth - 1);\n        cudaStreamDestroy(s);",
        "parent",
        3,
        "s",
        7,
    ),
]


@pytest.mark.parametrize(("launch", "kernel", "nargs", "stream", "line"), LAUNCHES)
def test_device_launch_lowers_to_a_launch_node(parse, launch, kernel, nargs, stream, line):
    tu = parse(SRC.replace("{launch}", launch).replace("{sync}", "cudaDeviceSynchronize();"))
    assert tu.rejected == {}, tu.diagnostics
    k = tu.function("parent")
    (node,) = find(k, A.Launch)
    assert node.kernel == kernel and len(node.args) == nargs and node.loc.line == line
    assert (node.stream.name if node.stream is not None else None) == stream
    assert "cudaDeviceSynchronize" in [c.func for c in find(k, A.Call)]


def test_device_heap_calls_and_error_checks_lower(parse):
    tu = parse("""\
__global__ void k(float** out, int n) {
    float* p;
    cudaError_t err = cudaMalloc((void**)&p, n * sizeof(float));
    if (err != cudaSuccess || cudaGetLastError() != cudaSuccess) return;
    out[0] = p;
    cudaFree(p);
}
""")
    assert tu.rejected == {}, tu.diagnostics
    assert [c.func for c in find(tu.kernels[0], A.Call)][:2] == ["cudaMalloc", "cudaGetLastError"]


def _run(src: str, kernel: str, grid, block, **args):
    from cuda2nki.frontend import parse_source

    tu = parse_source(src, "k.cu")
    assert not tu.rejected, tu.rejected
    return run_kernel_full(tu, kernel, grid=grid, block=block, args=args)


@pytest.mark.parametrize("launch", [x[0] for x in LAUNCHES[:2]])
def test_simt_runs_child_grids(launch):
    src = SRC.replace("{launch}", launch).replace("{sync}", "cudaDeviceSynchronize();")
    data = np.zeros(64 + 2, np.int32)
    out = _run(src, "parent", (2,), (32,), data=data, n=64, depth=1).outputs["data"]
    if "dim3" in launch:  # each block's child: 2 blocks of 16 threads write data[threadIdx.x]
        assert list(out[:64]) == ([7] * 16 + [0] * 16) * 2
    else:  # both children write all 32 values; block 1's launch runs last
        assert list(out[:32]) == [1] * 32
    assert list(out[64:]) == [1, 1]


RECURSIVE = """__global__ void fill(int* data, int width, int depth) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] += depth;
    if (depth > 0 && i == 0) {
        {launch}
        {sync}
    }
}
"""


@pytest.mark.parametrize(
    ("launch", "sync"),
    [
        ("fill<<<1, width>>>(data + width, width, depth - 1);", "cudaDeviceSynchronize();"),
        (
            "cudaStream_t s;\n        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n"
            "        fill<<<dim3(1), dim3(width), 0, s>>>(&data[width], width, depth - 1);",
            "cudaStreamDestroy(s);",
        ),
    ],
)
def test_simt_runs_recursive_launches(launch, sync):
    src = RECURSIVE.replace("{launch}", launch).replace("{sync}", sync)
    data = np.zeros(8 * 5, np.int32)
    out = _run(src, "fill", (1,), (8,), data=data, width=8, depth=4).outputs["data"]
    np.testing.assert_array_equal(out.reshape(5, 8), np.repeat([[4], [3], [2], [1], [0]], 8, 1))


def test_simt_refuses_launches_nested_too_deep_and_device_heap():
    src = RECURSIVE.replace("{launch}", "fill<<<1, 1>>>(data, width, depth - 1);")
    with pytest.raises(DiagnosticError) as exc:
        _run(
            src.replace("{sync}", ""),
            "fill",
            (1,),
            (1,),
            data=np.zeros(1, np.int32),
            width=1,
            depth=30,
        )
    assert (exc.value.diagnostic.code, exc.value.diagnostic.loc.line) == ("C2N1522", 5)
    heap = """\
__global__ void k(float** out) {
    float* p;
    if (threadIdx.x == 0) cudaMalloc((void**)&p, 64);
}
"""
    with pytest.raises(DiagnosticError) as exc:
        _run(heap, "k", (1,), (32,), out=np.zeros(1, np.int64))
    assert (exc.value.diagnostic.code, exc.value.diagnostic.loc.line) == ("C2N1522", 3)
