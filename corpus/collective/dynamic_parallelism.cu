// Dynamic parallelism: each thread of the parent launches a child grid that fills its segment.
// The interpreter runs the children; the port is refused (one kernel per launch).
// Valid CUDA with relocatable device code (nvcc -rdc=true).
#include <cuda_runtime.h>

__global__ void child_fill(float* seg, int len, float value) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < len) seg[j] = value;
}

__global__ void parent_launch(float* data, int segments, int seg_len) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < segments) {
        child_fill<<<(seg_len + 63) / 64, 64>>>(data + s * seg_len, seg_len, (float)s);
    }
}

void launch_parent(float* data, int segments, int seg_len) {
    parent_launch<<<(segments + 31) / 32, 32>>>(data, segments, seg_len);
}
