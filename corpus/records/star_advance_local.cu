// Stars held as structs with array members (position and velocity float[3]) and a mass:
// each thread copies its record into a local, updates the arrays in a loop (position moved, speed halved), writes the
// whole record back and stores a kinetic term; the local is one local per member, the
// array members [n, 3] tensors.
#include <cuda_runtime.h>

struct Star {
    float at[3];
    float speed[3];
    float weight;
    int id;
};

__global__ void advance_stars(Star* __restrict__ stars, float* __restrict__ ke, const int n,
                              float dt) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    Star me = stars[s];
    for (int c = 0; c < 3; ++c) {
        me.at[c] += me.speed[c] * dt;
        me.speed[c] = me.speed[c] * 0.5f;
    }
    ke[s] = me.weight * (me.speed[0] * me.speed[0] + me.speed[1] * me.speed[1] +
                         me.speed[2] * me.speed[2]);
    me.id = me.id + 1;
    me.weight += dt;
    stars[s] = me;
}

void launch_advance_stars(Star* stars, float* ke, int n, float dt) {
    advance_stars<<<(n + 127) / 128, 128>>>(stars, ke, n, dt);
}
