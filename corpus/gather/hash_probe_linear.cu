// Open-addressing hash table lookup with linear probing: the start slot is a multiplicative hash
// of the query masked to the table's power-of-two capacity, the probe steps by one slot modulo the
// capacity until it finds the key, an empty slot, or gives up after a fixed number of probes.
#include <cuda_runtime.h>

#define EMPTY_SLOT 0xffffffffu
#define MAX_PROBES 16

__global__ void lookup_linear_probe(const unsigned int* queries, const unsigned int* slot_key,
                                    const float* slot_val, float* found, int count,
                                    int capacity) {
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= count) return;
    const unsigned int key = queries[q];
    unsigned int slot = (key * 2654435761u) & (capacity - 1);
    float result = -1.0f;
    for (int probe = 0; probe < MAX_PROBES; ++probe) {
        const unsigned int held = slot_key[slot];
        if (held == key) {
            result = slot_val[slot];
            break;
        }
        if (held == EMPTY_SLOT) break;
        slot = (slot + 1) & (capacity - 1);
    }
    found[q] = result;
}

void lookup(const unsigned int* queries, const unsigned int* keys, const float* vals, float* out,
            int n) {
    lookup_linear_probe<<<(n + 127) / 128, 128>>>(queries, keys, vals, out, n, 256);
}
