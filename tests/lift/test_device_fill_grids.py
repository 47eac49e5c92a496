"""Grids sized to fill the GPU: a host that reads the device's properties (directly, through a
``cudaDeviceProp`` pointer, or through file-scope variables a setup function fills) launches a
grid-stride kernel whose result does not depend on the grid; inference takes the properties of
a nominal small GPU and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.hostvals import DEFAULT_BLOCK, NOMINAL_DEVICE
from cuda2nki.lift.infer import binding_from_inference, infer_binding

KERNEL = """
__global__ void sum_sq(float* acc, const float* x, int n) {
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += x[i] * x[i];
    atomicAdd(acc, s);
}
"""

SMS = NOMINAL_DEVICE["multiProcessorCount"]
PER_SM = NOMINAL_DEVICE["maxThreadsPerMultiProcessor"]
OCCUPANCY_GRID = SMS * (PER_SM // DEFAULT_BLOCK)

HOSTS = {
    "local-prop": (
        """
void run(float* acc, const float* x, int n) {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    const int threads = 256;
    int blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / threads);
    sum_sq<<<blocks, threads>>>(acc, x, n);
}""",
        SMS * (PER_SM // 256),
        256,
    ),
    "pointer-prop": (
        """
void run(const cudaDeviceProp* props, float* acc, const float* x, int n) {
    sum_sq<<<props->multiProcessorCount * 4, 128>>>(acc, x, n);
}""",
        SMS * 4,
        128,
    ),
    "globals-set-up-in-main": (
        """
int num_sms = 0;
int threads_per_sm = 0;
void run(float* acc, const float* x, int n, int block) {
    const int grid = max(1, threads_per_sm * num_sms / block);
    sum_sq<<<grid, block>>>(acc, x, n);
}
int main() {
    cudaDeviceProp deviceProp;
    cudaGetDeviceProperties(&deviceProp, 0);
    num_sms = deviceProp.multiProcessorCount;
    threads_per_sm = deviceProp.maxThreadsPerMultiProcessor;
    float *acc, *x;
    run(acc, x, 1 << 20, 512);
}""",
        max(1, PER_SM * SMS // 512),
        512,
    ),
    "occupancy-query": (
        """
void run(float* acc, const float* x, int n) {
    int minGridSize;
    int blockSize;
    checkCudaErrors(cudaOccupancyMaxPotentialBlockSize(&minGridSize, &blockSize, (void*)sum_sq));
    dim3 threads = dim3(blockSize, 1, 1);
    dim3 blocks = dim3(minGridSize, 1, 1);
    sum_sq<<<blocks, threads>>>(acc, x, n);
}""",
        OCCUPANCY_GRID,
        DEFAULT_BLOCK,
    ),
    "occupancy-query-smem": (
        """
void run(float* acc, const float* x, int n) {
    int grid_min, bs;
    cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid_min, &bs, sum_sq, smem_of, 0);
    sum_sq<<<grid_min * 2, bs>>>(acc, x, n);
}""",
        2 * OCCUPANCY_GRID,
        DEFAULT_BLOCK,
    ),
}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_grid_that_fills_the_gpu_takes_a_nominal_device(host: str) -> None:
    text, grid, block = HOSTS[host]
    tu = parse_source(KERNEL + text, "fill.cu")
    partial, diags = infer_binding(tu, "sum_sq")
    assert partial["launch"]["grid"][0] == grid and partial["launch"]["block"][0] == block
    assert set(partial["launch"]["grid"][1:] + partial["launch"]["block"][1:]) <= {1}
    launch = next(d for d in diags if "inferred launch" in d.message)
    assert "nominal small GPU" in launch.message
    assert binding_from_inference(tu, "sum_sq")[0] is not None


def test_a_global_hidden_by_a_local_keeps_its_own_value() -> None:
    text = """
int blocks = 6;
void setup() { int blocks; blocks = 1000; }
void run(float* acc, const float* x, int n) { sum_sq<<<blocks, 64>>>(acc, x, n); }
"""
    partial, _ = infer_binding(parse_source(KERNEL + text, "g.cu"), "sum_sq")
    assert partial["launch"]["grid"] == [6]


def test_a_global_set_in_a_function_takes_that_value() -> None:
    text = """
int blocks = 0;
void setup(int factor) { blocks = 3 * 2; }
void run(float* acc, const float* x, int n) { sum_sq<<<blocks, 64>>>(acc, x, n); }
"""
    partial, _ = infer_binding(parse_source(KERNEL + text, "g.cu"), "sum_sq")
    assert partial["launch"]["grid"] == [6]


def test_migrate_checks_a_kernel_launched_to_fill_the_gpu(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "fill.cu").write_text(KERNEL + HOSTS["globals-set-up-in-main"][0])
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True, timeout=600))
    (rec,) = [r for r in res.records if r["kernel"] == "sum_sq"]
    assert rec["status"] in ("automatic", "literal") and rec["verdict"] == "pass", rec


@pytest.mark.parametrize(
    "grid", ["max(1, 2048 / (block * 4))", "min(8, ceil_div(n, block))", "max(1, n / block)"]
)
def test_a_grid_that_is_not_a_polynomial_ports_without_an_error(tmp_path: Path, grid: str) -> None:
    """A grid sized by `max(1, SMs * threads / block)` (a sidecar or the host code may give one)
    is not a polynomial in the sizes: the lifter declines it, and the kernel is still ported or
    refused with a diagnostic, never with an exception."""
    from cuda2nki import api
    from cuda2nki.diagnostics import DiagnosticError

    src = tmp_path / "fill.cu"
    src.write_text(KERNEL)
    (tmp_path / "fill.toml").write_text(
        'kernel = "sum_sq"\n[launch]\n'
        f'grid = ["{grid}"]\nblock = [64]\n'
        "[params]\n"
        'acc = { shape = [1], dtype = "float32", role = "inout" }\n'
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        "n = 1000\nblock = 64\n"
    )
    try:
        res = api.port(str(src), kernel="sum_sq")
    except DiagnosticError as exc:
        assert exc.diagnostics
    else:
        assert res.source is None or "def sum_sq" in res.source
