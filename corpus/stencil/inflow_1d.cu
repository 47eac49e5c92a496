// One upwind advection step in 1-D with an inflow boundary: cell 0 takes the inflow value of
// this step, every other cell the upwind flux difference. Spelled as a ternary on the thread
// index, with a grid-independent early return.
#include <cuda_runtime.h>

__global__ void upwind_inflow(float* q, const float* flux, const float* inflow, float dt_dx,
                              int step, int cells) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= cells) return;
    q[gid] = gid == 0 ? inflow[step] : q[gid] - dt_dx * (flux[gid] - flux[gid - 1]);
}

void launch_upwind_inflow(float* q, const float* flux, const float* inflow, float dt_dx,
                          int step, int cells) {
    upwind_inflow<<<(cells + 255) / 256, 256>>>(q, flux, inflow, dt_dx, step, cells);
}
