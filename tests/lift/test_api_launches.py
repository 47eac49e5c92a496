"""Launches written as API calls: ``cudaLaunchKernel`` (with its arguments array), the
driver API's ``cuLaunchKernel`` on a function loaded by name (the kernel often in another file,
compiled with NVRTC), and CUDA graph kernel nodes.  Each gives the kernel a launch site whose
grid, block and arguments inference follows like those of ``<<<...>>>``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_file, parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

SCALE = """
extern "C" __global__ void scale_by(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""

RUNTIME = {
    "initializer-list-dim3": """
int main() {
    int n = 5000;
    float a = 2.0f;
    float *x, *y;
    void *args[] = {(void *)&y, (void *)&x, &a, &n};
    dim3 block(128), grid((n + 127) / 128);
    cudaLaunchKernel((void *)scale_by, grid, block, args, 0, 0);
}""",
    "items-assigned-scalars-checked": """
void run(float *y, float *x, int count) {
    float alpha = 0.5f;
    void *params[4];
    params[0] = (void *)&y;
    params[1] = (void *)&x;
    params[2] = (void *)&alpha;
    params[3] = (void *)&count;
    checkCudaErrors(cudaLaunchKernel((void *)scale_by, (count + 255) / 256, 256, params, 0, NULL));
}
int main() { float *x, *y; run(y, x, 3000); }""",
    "reinterpret-casts-and-first-item": """
int main() {
    int len = 4096;
    float s = 3.0f;
    float *dx, *dy;
    void *kargs[] = {reinterpret_cast<void *>(&dy), reinterpret_cast<void *>(&dx),
                     reinterpret_cast<void *>(&s), reinterpret_cast<void *>(&len)};
    cudaLaunchKernel(reinterpret_cast<void *>(&scale_by), dim3(len / 64), dim3(64), &kargs[0], 0, 0);
}""",
    "graph-kernel-node": """
int main() {
    int n = 2048;
    float a = 1.5f;
    float *x, *y;
    void *kernelArgs[4] = {(void *)&y, (void *)&x, (void *)&a, (void *)&n};
    cudaKernelNodeParams p = {0};
    p.func = (void *)scale_by;
    p.gridDim = dim3(n / 256, 1, 1);
    p.blockDim = dim3(256, 1, 1);
    p.sharedMemBytes = 0;
    p.kernelParams = (void **)kernelArgs;
    p.extra = NULL;
    cudaGraphAddKernelNode(&node, graph, NULL, 0, &p);
}""",
}


def _check(tu, kernel: str = "scale_by") -> dict:
    partial, diags = infer_binding(tu, kernel)
    assert "launch" in partial, [d.message for d in diags]
    n = partial["params"]["n"]
    assert isinstance(n, int) and n > 0
    assert isinstance(partial["params"]["a"], float)
    grid = partial["launch"]["grid"][0]
    blocks = eval_c_expr(grid, {"n": n}) if isinstance(grid, str) else grid
    assert blocks * partial["launch"]["block"][0] >= n
    assert binding_from_inference(tu, kernel)[0] is not None
    return partial


@pytest.mark.parametrize("host", sorted(RUNTIME))
def test_runtime_api_launches_and_graph_nodes(host: str) -> None:
    tu = parse_source(SCALE + RUNTIME[host], "r.cu")
    assert [s.kernel for s in tu.launch_sites] == ["scale_by"]
    _check(tu)


DRIVER = """
#include <cuda.h>
int main() {
    CUmodule module;
    CUfunction fn;
    cuModuleLoad(&module, "scale.fatbin");
    checkCudaErrors(cuModuleGetFunction(&fn, module, "scale_by"));
    int n = 10000;
    float a = 4.0f;
    CUdeviceptr d_x, d_y;
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    void *args[] = {&d_y, &d_x, &a, &n};
    checkCudaErrors(cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, NULL, args, NULL));
}
"""


def test_a_driver_api_launch_in_another_file_gives_the_launch(tmp_path: Path) -> None:
    (tmp_path / "scale_kernel.cu").write_text(SCALE)
    (tmp_path / "host.cpp").write_text(DRIVER)
    tu = parse_file(str(tmp_path / "scale_kernel.cu"))
    partial = _check(tu)
    assert partial["launch"]["block"] == [256, 1, 1]


def test_a_driver_launch_with_packed_arguments_gives_no_site() -> None:
    text = DRIVER.replace("args, NULL));", "NULL, extra));")
    tu = parse_source(SCALE + text, "p.cu")
    assert not tu.launch_sites


def test_a_driver_launch_that_hides_its_arguments_is_named_in_the_diagnostic(
    tmp_path: Path,
) -> None:
    (tmp_path / "scale_kernel.cu").write_text(SCALE)
    (tmp_path / "host.cpp").write_text(DRIVER.replace("args, NULL));", "NULL, extra));"))
    tu = parse_file(str(tmp_path / "scale_kernel.cu"))
    _, diags = infer_binding(tu, "scale_by")
    (why,) = [d for d in diags if d.code == "C2N2101" and "launch configuration" in d.message]
    assert "host.cpp loads it by name" in why.message and "cuLaunchKernel" in why.message
