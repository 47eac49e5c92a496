#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cassert>
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))
#define WARP_SIZE 32
typedef __nv_bfloat16 floatX;

__device__ __forceinline__ float warpReduceSum(float val) {
    #pragma unroll
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1)
        val += __shfl_xor_sync(0xFFFFFFFF, val, offset);
    return val;
}

template <const int BLOCK_SIZE = 256>
__global__ void __launch_bounds__(BLOCK_SIZE) layernorm_forward(floatX* __restrict__ out, float* __restrict__ mean,
        float* __restrict__ rstd, const floatX* __restrict__ const inp, const floatX* weight,
        const floatX* bias, int N, int C) {
    static_assert(BLOCK_SIZE % 32 == 0, "block size must be a multiple of 32");
    extern __shared__ char smem[];
    float* shared = reinterpret_cast<float*>(smem);
    int lane_id = threadIdx.x % WARP_SIZE;
    int warp_id = threadIdx.x / WARP_SIZE;
    int num_warps = blockDim.x / WARP_SIZE;
    long long idx = (long long)blockIdx.x * num_warps + warp_id;
    if (idx >= N) { return; }
    const floatX* x = inp + idx * C;
    float sum = 0.0f;
    for (int i = lane_id; i < C; i += WARP_SIZE) {
        sum += (float)x[i];
    }
    sum = warpReduceSum(sum);
    float m = sum / C;
    if (lane_id == 0 && mean != nullptr) {
        __stcs(mean + idx, m);
    }
    volatile float* vs = shared;
    vs[threadIdx.x] = m;
    float s = rsqrtf(m + 1e-5f);
    floatX* o = out + idx * C;
    for (int c = lane_id; c < C; c += WARP_SIZE) {
        float n = s * ((float)__ldcs(x + c) - m);
        __stcs(o + c, (floatX)(n * (float)weight[c] + (float)bias[c]));
    }
    assert(C > 0);
    unsigned int tid = threadIdx.x;
    float4 a = __ldg(reinterpret_cast<const float4*>(rstd) + tid);
    int2 cc = make_int2(1, 2);
    rstd[tid] = __fdividef(a.x, a.y) + cc.x + 0x1p-3f + 1.f + .5;
}

void launch(floatX* out, float* mean, float* rstd, const floatX* inp, const floatX* w, const floatX* b, int N, int C) {
    const int block_size = 512;
    const int grid_size = CEIL_DIV(N * 32, block_size);
    size_t smem = block_size * sizeof(float);
    layernorm_forward<block_size><<<grid_size, block_size, smem>>>(out, mean, rstd, inp, w, b, N, C);
}
