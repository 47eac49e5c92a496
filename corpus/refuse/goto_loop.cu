// Must be refused: goto-based control flow (a retry loop written with a label).
#include <cuda_runtime.h>

__global__ void collatz_steps(int* steps, const int* start, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = start[i];
    int count = 0;
again:
    if (v > 1) {
        v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
        ++count;
        goto again;
    }
    steps[i] = count;
}

void launch_collatz(int* steps, const int* start, int n) {
    collatz_steps<<<(n + 127) / 128, 128>>>(steps, start, n);
}
