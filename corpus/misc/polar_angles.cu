// Cartesian points to spherical angles: azimuth through atan2f (all four quadrants), the
// polar angle through acosf of the normalised height, and the elevation through asinf; a 2-D
// grid over (point, batch) with a combined guard.
#include <cuda_runtime.h>

__global__ void to_spherical(const float* px, const float* py, const float* pz, float* azimuth,
                             float* polar, float* elevation, int points, int batches) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    if (p < points && b < batches) {
        int at = b * points + p;
        float x = px[at], y = py[at], z = pz[at];
        float r = sqrtf(x * x + y * y + z * z) + 1e-20f;
        azimuth[at] = atan2f(y, x);
        polar[at] = acosf(fminf(1.0f, fmaxf(-1.0f, z / r)));
        elevation[at] = asin(fminf(1.0f, fmaxf(-1.0f, z / r))) + atan(y * 0.5f);
    }
}

void launch_to_spherical(const float* px, const float* py, const float* pz, float* azimuth,
                         float* polar, float* elevation, int points, int batches) {
    dim3 block(64);
    dim3 grid((points + 63) / 64, batches);
    to_spherical<<<grid, block>>>(px, py, pz, azimuth, polar, elevation, points, batches);
}
