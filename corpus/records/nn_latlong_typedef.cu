// Nearest-neighbour distances over an array of typedef'd records (Rodinia style): the tagged
// struct is spelled both `struct latLong` and `LatLong`, read through `->` and `[i].`, and the
// query point is a local record built by brace initialisation.
#include <cuda_runtime.h>

typedef struct latLong {
    float lat;
    float lng;
} LatLong;

__device__ float dist_to(const struct latLong* p, LatLong q) {
    float dlat = p->lat - q.lat;
    float dlng = p->lng - q.lng;
    return sqrtf(dlat * dlat + dlng * dlng);
}

__global__ void euclid_records(const LatLong* d_locations, float* d_distances, int numRecords,
                               float lat, float lng) {
    int globalId = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    LatLong q = {lat, lng};
    if (globalId < numRecords) {
        const LatLong* rec = &d_locations[globalId];
        float near = dist_to(rec, q);
        if (d_locations[globalId].lat == q.lat) near = fabsf(rec->lng - q.lng);
        d_distances[globalId] = near;
    }
}

void launch_euclid_records(const LatLong* d_locations, float* d_distances, int numRecords,
                           float lat, float lng) {
    dim3 grid(8, (numRecords + 8 * 128 - 1) / (8 * 128));
    euclid_records<<<grid, 128>>>(d_locations, d_distances, numRecords, lat, lng);
}
