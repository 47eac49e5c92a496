// Linear layer of a GPT-2-style model: out[bt][oc] = bias[oc] + sum_c inp[bt][c] * weight[oc][c]
// (weight stored (OC, C), so out = inp @ weight^T + bias), one thread per output on a 2-D grid.
// The bias is optional: the running sum starts from it when the pointer is not NULL.
#include <cuda_runtime.h>
#include <cstddef>

__global__ void matmul_forward_bias(float* out, const float* inp, const float* weight,
                                    const float* bias, int BT, int C, int OC) {
    int bt = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y * blockDim.y + threadIdx.y;
    if (bt < BT && oc < OC) {
        float val = (bias != NULL) ? bias[oc] : 0.0f;
        const float* wrow = weight + oc * C;
        const float* inp_bt = inp + bt * C;
        for (int i = 0; i < C; i++) {
            val += inp_bt[i] * wrow[i];
        }
        out[bt * OC + oc] = val;
    }
}

void launch_matmul_forward_bias(float* out, const float* inp, const float* weight,
                                const float* bias, int BT, int C, int OC) {
    dim3 block(32, 8);
    dim3 grid((BT + 31) / 32, (OC + 7) / 8);
    matmul_forward_bias<<<grid, block>>>(out, inp, weight, bias, BT, C, OC);
}
