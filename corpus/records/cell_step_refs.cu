// Local time step of a finite-volume cell: density, float3 momentum and energy per cell (three
// planes of momentum), the velocity written through float3 reference out-parameters, the
// pressure and speed of sound from helpers taking their inputs by const reference.
#include <cuda_runtime.h>

#define GAS_GAMMA 1.4f
#define CELL_BLOCK 128

__device__ inline void cell_velocity(const float& rho, const float3& mom, float3& vel) {
    vel.x = mom.x / rho;
    vel.y = mom.y / rho;
    vel.z = mom.z / rho;
}

__device__ inline float speed_squared(const float3& v) { return v.x * v.x + v.y * v.y + v.z * v.z; }

__device__ inline float cell_pressure(const float& rho, const float& energy, const float& s2) {
    return (GAS_GAMMA - 1.0f) * (energy - 0.5f * rho * s2);
}

__global__ void cell_step(const float* rho, const float* mom, const float* energy, float* step,
                          int cells) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cells) return;
    float density = fabsf(rho[c]) + 1.0f;
    float3 momentum;
    momentum.x = mom[c];
    momentum.y = mom[cells + c];
    momentum.z = mom[2 * cells + c];
    float e = fabsf(energy[c]) * 4.0f + 2.0f;
    float3 velocity;
    cell_velocity(density, momentum, velocity);
    float s2 = speed_squared(velocity);
    float p = cell_pressure(density, e, s2);
    float sound = sqrtf(GAS_GAMMA * fabsf(p) / density);
    step[c] = 0.5f / (sqrtf(s2) + sound);
}

void launch_cell_step(const float* rho, const float* mom, const float* energy, float* step,
                      int cells) {
    cell_step<<<(cells + CELL_BLOCK - 1) / CELL_BLOCK, CELL_BLOCK>>>(rho, mom, energy, step, cells);
}
