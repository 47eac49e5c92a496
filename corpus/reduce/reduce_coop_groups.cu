// Per-block sums with cooperative groups: tiles of 32 threads reduce with shfl_down, tile
// leaders store to shared memory, the block syncs, and thread 0 adds the tile sums.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void reduce_coop_groups(const float* data, float* block_sums, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    __shared__ float tile_sums[4];

    int gi = blockIdx.x * blockDim.x + threadIdx.x;
    float v = gi < n ? data[gi] : 0.0f;
    for (int off = tile.size() / 2; off > 0; off /= 2) {
        v += tile.shfl_down(v, off);
    }
    if (tile.thread_rank() == 0) {
        tile_sums[threadIdx.x / 32] = v;
    }
    block.sync();
    if (block.thread_rank() == 0) {
        float s = 0.0f;
        for (int w = 0; w < 4; ++w) s += tile_sums[w];
        block_sums[blockIdx.x] = s;
    }
}

void launch_reduce_coop_groups(const float* data, float* block_sums, int n) {
    reduce_coop_groups<<<(n + 127) / 128, 128>>>(data, block_sums, n);
}
