// Cube roots by Newton's method: every element iterates until its own last update is below a
// relative tolerance, so threads leave the do-while loop after different numbers of steps; the
// steps taken are written out too.
#include <cuda_runtime.h>

__global__ void newton_cube_root(const float* a, float* root, int* steps, int count, float tol) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx >= count) return;
    float s = a[idx];
    float z = s > 1.0f ? s : 1.0f;
    float delta;
    int n = 0;
    do {
        delta = (z * z * z - s) / (3.0f * z * z);
        z -= delta;
        n++;
    } while (fabsf(delta) > tol * z);
    root[idx] = z;
    steps[idx] = n;
}

void launch_newton_cube_root(const float* a, float* root, int* steps, int count, float tol) {
    newton_cube_root<<<(count + 95) / 96, 96>>>(a, root, steps, count, tol);
}
