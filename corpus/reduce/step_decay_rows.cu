// A per-element sum whose terms are weighted by the step number, w = 0.5f * j (the index only
// used as a value, its count a macro); rows on blockIdx.y, an early return for the tail.
#include <cuda_runtime.h>

#define STEPS 5

__global__ void step_decay_rows(const float* __restrict__ in, float* __restrict__ out, int rows,
                                int cols) {
    const int c = threadIdx.x + blockIdx.x * blockDim.x;
    const int r = blockIdx.y;
    if (c >= cols) return;
    float acc = 0.0f;
    for (int j = 0; j < STEPS; j++) acc += in[r * cols + c] * (0.5f * j);
    out[r * cols + c] = acc;
}

void run(const float* in, float* out, int rows, int cols) {
    dim3 grid((cols + 127) / 128, rows);
    step_decay_rows<<<grid, 128>>>(in, out, rows, cols);
}
