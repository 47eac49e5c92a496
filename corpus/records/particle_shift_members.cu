// Particles held as an array of structs whose members differ in type (three floats and an int
// cell index): members read and written with `.` on indexed elements; each member is one
// tensor of the port (structure of arrays).
#include <cuda_runtime.h>

struct Particle {
    float x, y, z;
    int cell;
};

__global__ void shift_particles(Particle* ps, float* speed, float dx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        ps[i].x = ps[i].x + dx;
        speed[i] = ps[i].y * (float)ps[i].cell + ps[i].z;
    }
}

void launch_shift_particles(Particle* ps, float* speed, float dx, int n) {
    shift_particles<<<(n + 255) / 256, 256>>>(ps, speed, dx, n);
}
