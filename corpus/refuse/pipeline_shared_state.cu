// Must be refused: a pipeline shared by the block, one warp producing copies that the other
// warps consume; a consumer waits for copies other threads made, an ordering between threads
// the front end does not model.
#include <cuda/pipeline>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void produce_consume(const float* in, float* out, int n) {
    __shared__ float stage[2][32];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
    cg::thread_block block = cg::this_thread_block();
    const auto role = threadIdx.x < 32 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
    auto pipe = cuda::make_pipeline(block, &state, role);
    int base = blockIdx.x * 64;
    if (threadIdx.x < 32) {
        pipe.producer_acquire();
        cuda::memcpy_async(&stage[0][threadIdx.x], &in[base + threadIdx.x], sizeof(float), pipe);
        pipe.producer_commit();
    } else {
        pipe.consumer_wait();
        int t = threadIdx.x - 32;
        if (base + t < n) out[base + t] = 2.0f * stage[0][t];
        pipe.consumer_release();
    }
}

void launch_produce_consume(const float* in, float* out, int n) {
    produce_consume<<<(n + 63) / 64, 64>>>(in, out, n);
}
