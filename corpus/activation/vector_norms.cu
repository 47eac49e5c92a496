// Lengths of 3- and 4-component vectors stored as separate coordinate arrays: the norm of
// each 3-vector, its reciprocal (to normalise), the reciprocal length of a 2-vector and the
// norm of a 4-vector, with the toolkit's norm / reciprocal-norm math functions.
#include <cuda_runtime.h>

__global__ void vector_norms(float* len3, float* inv3, float* inv2, float* len4,
                             const float* x, const float* y, const float* z, const float* w,
                             int count) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    float a = x[k], b = y[k], c = z[k];
    len3[k] = norm3df(a, b, c);
    inv3[k] = rnorm3df(a, b, c);
    inv2[k] = rhypotf(a, c);
    len4[k] = norm4df(a, b, c, w[k]);
}

void launch_vector_norms(float* len3, float* inv3, float* inv2, float* len4, const float* x,
                         const float* y, const float* z, const float* w, int count) {
    vector_norms<<<(count + 255) / 256, 256>>>(len3, inv3, inv2, len4, x, y, z, w, count);
}
