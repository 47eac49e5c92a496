// Kinetic-style energy of point masses stored as `struct { float3 pos; float mass; }`: members
// reached with `->` through a local pointer into the array, in a grid-stride loop over a fixed
// grid; the float3 member is one [n, 3] tensor, the mass another.
#include <cuda_runtime.h>

typedef struct {
    float3 pos;
    float mass;
} PointMass;

__global__ void point_energy(const PointMass* __restrict__ pts, float* energy, int count) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x) {
        const PointMass* p = pts + k;
        float r2 = p->pos.x * p->pos.x + p->pos.y * p->pos.y + p->pos.z * p->pos.z;
        energy[k] = 0.5f * p->mass * r2;
    }
}

void launch_point_energy(const PointMass* pts, float* energy, int count) {
    point_energy<<<32, 128>>>(pts, energy, count);
}
