// Circular shift (np.roll): out[i] = in[(i - shift) mod n]. C's % truncates toward zero, so a
// negative remainder is wrapped explicitly; shift may be negative or exceed n.
#include <cuda_runtime.h>

__global__ void roll_1d(float* out, const float* in, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = (i - shift) % n;
        if (j < 0) j += n;
        out[i] = in[j];
    }
}

void launch_roll_1d(float* out, const float* in, int n, int shift) {
    roll_1d<<<(n + 255) / 256, 256>>>(out, in, n, shift);
}
