// Causal softmax, one thread per row of a flat (R, T) matrix whose query position is r % T:
// the exponentials are scaled by a temperature and stored, and the normalising loop over the
// whole row tests the future first (if (c > pos) ... else ...) and divides by the sum.
#include <cuda_runtime.h>
#include <float.h>

__global__ void causal_softmax_future_first(float* out, const float* in, float inv_temp, int R,
                                            int T) {
    int r = threadIdx.x + blockDim.x * blockIdx.x;
    if (r >= R * T) return;
    int pos = r % T;
    const float* row = in + r * T;
    float* o = out + r * T;
    float best = -FLT_MAX;
    for (int c = 0; c <= pos; c++) best = fmaxf(best, row[c] * inv_temp);
    float sum = 0.0f;
    for (int c = 0; c <= pos; c++) {
        float v = expf(row[c] * inv_temp - best);
        o[c] = v;
        sum += v;
    }
    for (int c = 0; c < T; c++) {
        if (c > pos) {
            o[c] = 0.0f;
        } else {
            o[c] = o[c] / sum;
        }
    }
}

void launch_causal_softmax_future_first(float* out, const float* in, float inv_temp, int R,
                                        int T) {
    causal_softmax_future_first<<<(R * T + 255) / 256, 256>>>(out, in, inv_temp, R, T);
}
