// Grid-wide synchronisation through cooperative groups (a cooperative launch): a single-kernel
// two-phase normalisation.  The interpreter runs it; the port is refused (split at grid.sync()).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void normalize_grid_sync(float* data, float* total, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, data[i]);
    grid.sync();
    if (i < n) data[i] /= *total;
}

void launch_normalize_grid_sync(float* data, float* total, int n) {
    void* args[] = {&data, &total, &n};
    cudaLaunchCooperativeKernel((void*)normalize_grid_sync, dim3((n + 255) / 256), dim3(256), args);
}
