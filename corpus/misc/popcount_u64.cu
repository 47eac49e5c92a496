// Set bits of every 64-bit word, counted three ways that must agree: by 2-, 4- and 8-bit fields
// folded with shifted sums, by the same fields summed with one multiplication (read from the top
// byte), and with __popcll; the three counts are packed into one int per word.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void popcount_u64(const unsigned long long* words, int* counts, int n) {
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= n) return;
    unsigned long long v = words[w];
    unsigned long long f = v - ((v >> 1) & 0x5555555555555555ULL);
    f = (f & 0x3333333333333333ULL) + ((f >> 2) & 0x3333333333333333ULL);
    f = (f + (f >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    unsigned long long folded = f + (f >> 8);
    folded += folded >> 16;
    folded += folded >> 32;
    int by_fold = (int)(folded & 0x7f);
    int by_product = (int)((f * 0x0101010101010101ULL) >> 56);
    counts[w] = by_fold + 128 * by_product + 16384 * __popcll(v);
}

void launch_popcount_u64(const unsigned long long* words, int* counts, int n) {
    popcount_u64<<<(n + 255) / 256, 256>>>(words, counts, n);
}
