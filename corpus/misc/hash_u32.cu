// Integer hashing (a 32-bit avalanche finaliser) of every key, relying on unsigned 32-bit
// wraparound of multiplication, logical right shifts and xor; grid-stride loop with unsigned
// counters.
#include <cstdint>
#include <cuda_runtime.h>

__device__ __forceinline__ uint32_t mix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

__global__ void hash_u32(const uint32_t* keys, uint32_t* hashes, uint32_t seed, unsigned int n) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        hashes[i] = mix32(keys[i] ^ seed) % 1000003u;
    }
}

void launch_hash_u32(const uint32_t* keys, uint32_t* hashes, uint32_t seed, unsigned int n) {
    hash_u32<<<32, 128>>>(keys, hashes, seed, n);
}
