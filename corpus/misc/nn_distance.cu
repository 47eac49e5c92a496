// Nearest-neighbour search, distance phase: Euclidean distance of every (lat, lng) record
// (float2) to a query point. The grid is 2-D and linearised (x-blocks per row of the grid).
#include <cuda_runtime.h>

__global__ void nn_distance(const float2* __restrict__ locations, float* __restrict__ distances,
                            int num_records, float lat, float lng) {
    int globalId = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    if (globalId < num_records) {
        float2 latLong = locations[globalId];
        float dlat = lat - latLong.x;
        float dlng = lng - latLong.y;
        distances[globalId] = sqrtf(dlat * dlat + dlng * dlng);
    }
}

void launch_nn_distance(const float2* locations, float* distances, int num_records, float lat,
                        float lng) {
    dim3 grid(16, (num_records + 16 * 64 - 1) / (16 * 64));
    nn_distance<<<grid, 64>>>(locations, distances, num_records, lat, lng);
}
