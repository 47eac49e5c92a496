// Particle drift over an array of six-float structs staged in a shared-memory array of the
// struct: whole-struct copies (global -> shared -> local -> global) and member updates.
#include <cuda_runtime.h>

typedef struct {
    float x, y, z;
    float vx, vy, vz;
} Body;

#define TILE 128

__global__ void drift_bodies(Body* __restrict__ out, const Body* __restrict__ in, float dt, int n) {
    __shared__ Body tile[TILE];
    int t = threadIdx.x;
    int i = blockIdx.x * TILE + t;
    if (i < n) tile[t] = in[i];
    __syncthreads();
    if (i < n) {
        Body b = tile[t];
        b.x += b.vx * dt;
        b.y = b.y + b.vy * dt;
        b.z = tile[t].z + tile[t].vz * dt;
        out[i] = b;
    }
}

void launch_drift_bodies(Body* out, const Body* in, float dt, int n) {
    drift_bodies<<<(n + TILE - 1) / TILE, TILE>>>(out, in, dt, n);
}
