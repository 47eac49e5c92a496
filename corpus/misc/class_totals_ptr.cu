// Per-class counts by pointer arithmetic on the class label: each element adds one at
// count + label[i] (one element per thread, global atomics), with no range check in the kernel:
// the labels are the host's, all below the class count it allocates.  The count buffer
// accumulates onto its initial contents; the host wrapper allocates twelve classes.
#include <cuda_runtime.h>

#define N_CLASSES 12

__global__ void class_totals_ptr(int* count, const int* label, int elems, int classes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < elems) {
        atomicAdd(count + label[i], 1);
    }
}

void class_totals_host(int* h_count, const int* h_label, int elems) {
    int *d_count, *d_label;
    cudaMalloc(&d_count, N_CLASSES * sizeof(int));
    cudaMalloc(&d_label, elems * sizeof(int));
    cudaMemcpy(d_count, h_count, N_CLASSES * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(d_label, h_label, elems * sizeof(int), cudaMemcpyHostToDevice);
    class_totals_ptr<<<(elems + 255) / 256, 256>>>(d_count, d_label, elems, N_CLASSES);
    cudaMemcpy(h_count, d_count, N_CLASSES * sizeof(int), cudaMemcpyDeviceToHost);
}
