// Power to decibels and back: 10 log10(p + eps), then 10^(db / 10) through exp10f, in a
// grid-stride loop over a fixed grid.
#include <cuda_runtime.h>

__global__ void to_decibel(float* db, float* back, const float* power, float eps, int count) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x) {
        float d = 10.0f * log10f(power[k] + eps);
        db[k] = d;
        back[k] = exp10f(0.1f * d);
    }
}

void launch_to_decibel(float* db, float* back, const float* power, float eps, int count) {
    to_decibel<<<8, 128>>>(db, back, power, eps, count);
}
