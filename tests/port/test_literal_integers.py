"""C's 32-bit integer arithmetic on per-thread data in the literal lowering: wraparound
multiplication and addition, unsigned and signed division and remainder by a uniform divisor,
logical and arithmetic right shifts, unsigned comparisons and conversions, all bit-exact against
the SIMT interpreter on both targets (the engines compute in fp32, exact only below 2**24)."""

from __future__ import annotations

from tests.port.test_literal import _kernel, _matches

_U32 = (
    'keys = {{ shape = ["n"], dtype = "uint32", role = "in", range = [0, 4294967295] }}\n'
    'out = {{ shape = ["n"], dtype = "{out}", role = "out" }}\n'
    "n = 300"
)


def test_avalanche_hash_modulo_a_prime_grid_stride(tmp_path):
    src = """
#include <cstdint>
__device__ uint32_t fmix(uint32_t h) {
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return h;
}
__global__ void k(const uint32_t* keys, uint32_t* out, uint32_t seed, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = fmix(keys[i] ^ seed) % 65521u + fmix(keys[i]) / 3000000000u;
}
"""
    params = _U32.format(out="uint32") + '\nseed = { value = 2654435769, dtype = "uint32" }'
    cu = _kernel(tmp_path, src, "k", "3", "64", params, ["n = 1", "n = 129\nseed = 7"])
    _matches(cu, tmp_path)


def test_fnv_bytes_unsigned_compare_and_conversion(tmp_path):
    """A per-thread loop over the bytes of a key (FNV-1a), an unsigned comparison above 2**31
    and the hash as a float."""
    src = """
__global__ void k(const unsigned int* keys, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int h = 2166136261u;
    unsigned int key = keys[i];
    for (int b = 0; b < 4; ++b) {
        h = (h ^ ((key >> (8 * b)) & 255u)) * 16777619u;
    }
    if (h > 3000000000u) h = h - 1000000000u;
    out[i] = (float)h + (h >= key ? 0.5f : 0.0f);
}
"""
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 128)"', "128", _U32.format(out="float32"),
                 ["n = 1", "n = 257"])  # fmt: skip
    _matches(cu, tmp_path)


def test_signed_division_remainder_and_arithmetic_shift(tmp_path):
    """C truncates signed division toward zero and keeps the dividend's sign in the remainder;
    >> on a negative int fills with the sign; multiplication and addition wrap."""
    src = """
__global__ void k(const int* v, int* q, int* r, int* s, int n, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int x = v[i];
        q[i] = x / d;
        r[i] = x % d - (-x);
        s[i] = (x >> 7) + (int)((unsigned)x * 2654435761u) + (x < -5 ? 1 : 0);
    }
}
"""
    params = (
        'v = { shape = ["n"], dtype = "int32", role = "in", range = [-2147483648, 2147483647] }\n'
        'q = { shape = ["n"], dtype = "int32", role = "out" }\n'
        'r = { shape = ["n"], dtype = "int32", role = "out" }\n'
        's = { shape = ["n"], dtype = "int32", role = "out" }\n'
        "n = 200\nd = -7"
    )
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 32)"', "32", params,
                 ["n = 33\nd = 1000003", "n = 5\nd = -2147483647"])  # fmt: skip
    _matches(cu, tmp_path)


def test_unsigned_values_convert_to_float_as_unsigned(tmp_path):
    """Implicit and explicit conversions of unsigned 32-bit values above 2**31 to float."""
    src = """
__global__ void k(const unsigned int* keys, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int h = keys[i] * 3u;
        float f = h;
        float g = static_cast<float>(keys[i]);
        out[i] = f * 0.5f + g - (h > keys[i] ? 1.0f : 2.0f) + h / 7u;
    }
}
"""
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 96)"', "96", _U32.format(out="float32"),
                 ["n = 2", "n = 97"])  # fmt: skip
    _matches(cu, tmp_path)


def test_division_by_per_thread_divisors(tmp_path):
    """Signed and unsigned / and % where the divisor is data too (C truncation, no zero)."""
    src = """
__global__ void k(const int* a, const int* b, int* q, unsigned int* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int d = b[i] == 0 ? 3 : b[i];
        q[i] = a[i] / d - a[i] % (d | 1);
        unsigned int u = (unsigned int)a[i], v = (unsigned int)d;
        r[i] = u % v + u / (v | 0x80000000u);
    }
}
"""
    params = (
        'a = { shape = ["n"], dtype = "int32", role = "in", range = [-2147483648, 2147483647] }\n'
        'b = { shape = ["n"], dtype = "int32", role = "in", range = [-70000, 70000] }\n'
        'q = { shape = ["n"], dtype = "int32", role = "out" }\n'
        'r = { shape = ["n"], dtype = "uint32", role = "out" }\n'
        "n = 100"
    )
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 64)"', "64", params, ["n = 1", "n = 65"])
    _matches(cu, tmp_path)
