// A 64-bit finaliser of counter-based keys: every key offset by a multiple of its index, then
// xor-shift-multiply rounds whose products wrap modulo 2**64; the 64-bit hashes are written out.
#include <cstdint>
#include <cuda_runtime.h>

__device__ __forceinline__ uint64_t finalise64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

__global__ void mix_u64(const uint64_t* keys, uint64_t* hashes, int n) {
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        hashes[t] = finalise64(keys[t] + 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1));
    }
}

void launch_mix_u64(const uint64_t* keys, uint64_t* hashes, int n) {
    mix_u64<<<8, 128>>>(keys, hashes, n);
}
