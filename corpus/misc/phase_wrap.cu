// Oscillator phases wrapped into one period: fmodf keeps the sign of the phase, remainderf
// centres it on zero (ties to the even multiple), copysignf restores the direction of travel;
// non-finite phases are flagged and zeroed.  Early return guard, block of 128.
#include <cuda_runtime.h>

#define TWO_PI 6.28318530718f

__global__ void wrap_phases(const float* __restrict__ phase, const float* __restrict__ velocity,
                            float* __restrict__ wrapped, float* __restrict__ centred,
                            int* __restrict__ flags, float period, int count) {
    const int tid = threadIdx.x + blockDim.x * blockIdx.x;
    if (tid >= count) return;
    const float ph = phase[tid];
    if (!isfinite(ph)) {
        wrapped[tid] = 0.0f;
        centred[tid] = 0.0f;
        flags[tid] = isnan(ph) ? 2 : 1;
        return;
    }
    wrapped[tid] = copysignf(fabsf(fmodf(ph, TWO_PI)), velocity[tid]);
    centred[tid] = remainderf(ph, period) + fmod(ph * 0.5f, 1.0f);
    flags[tid] = signbit(velocity[tid]) ? -1 : 0;
}

void launch_wrap_phases(const float* phase, const float* velocity, float* wrapped, float* centred,
                        int* flags, float period, int count) {
    wrap_phases<<<(count + 127) / 128, 128>>>(phase, velocity, wrapped, centred, flags, period,
                                             count);
}
