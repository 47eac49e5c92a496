"""Local arrays of 64-bit integers in literal ports: lists of limb pairs, read and written at
uniform indices by name and at per-thread indices by selects, under per-thread conditions and
through loops, bit-exact against the SIMT interpreter over the whole 64-bit range."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

U64 = [0, 2**64 - 1]
I64 = [-(2**63), 2**63 - 1]

#: name -> (parameters, body after ``int i = ...``, {parameter: (dtype, role, range[, extent])})
KERNELS = {
    # words combined under bit masks spread to all 64 bits by a product (erasure-coding style)
    "masked_xor_rows": (
        "const long* in, long* out, const unsigned int* bits, int n",
        "    long result[2];\n    result[0] = 0;\n    result[1] = 0;\n"
        "    const unsigned long ones = 0xFFFFFFFFFFFFFFFF;\n"
        "    if (i >= n) return;\n"
        "    for (int j = 0; j < 3; j++) {\n"
        "        unsigned int m = bits[j];\n"
        "        long w = in[j * n + i];\n"
        "        result[0] = result[0] ^ ((((m >> (i % 4)) & 1u) * ones) & w);\n"
        "        result[1] ^= (((m >> (i % 4 + 4)) & 1u) * ones) & (w + j);\n"
        "    }\n"
        "    out[i] = result[0];\n    out[i + n] = result[1];\n",
        {
            "in": ("int64", "in", I64, "3 * n"),
            "out": ("int64", "out", None, "2 * n"),
            "bits": ("uint32", "in", [0, 255], 3),
        },
    ),
    # an initialised unsigned array picked and updated at a per-thread index
    "lane_picked_words": (
        "const unsigned long long* a, unsigned long long* b, int n",
        "    unsigned long long w[4] = {1, 0xffffffff00000000ULL, 3};\n"
        "    if (i < n) {\n"
        "        w[i & 3] = a[i] * w[(i + 1) & 3];\n"
        "        w[(i >> 2) & 3] += a[i] >> 33;\n"
        "        b[i] = w[0] ^ w[1] ^ (w[2] << 5) ^ w[3];\n"
        "    }\n",
        {"a": ("uint64", "in", U64), "b": ("uint64", "out", None)},
    ),
    # signed elements written under a per-thread condition, compared and shifted arithmetically
    "signed_conditional": (
        "const int64_t* x, int64_t* y, int n",
        "    int64_t t[3] = {0, -1, 0};\n"
        "    if (i >= n) return;\n"
        "    int64_t v = x[i];\n"
        "    if (v < 0) t[0] = -v; else t[2] = v >> 3;\n"
        "    if (t[0] > t[2]) t[1] = t[0] - t[2];\n"
        "    y[i] = t[0] + (t[1] >> 1) + t[2];\n",
        {"x": ("int64", "in", I64), "y": ("int64", "out", None)},
    ),
    # a 2-D array of sizes filled in a loop, one row read back at a per-thread index
    "size_table_rows": (
        "const size_t* s, size_t* r, int n",
        "    size_t tab[2][3];\n"
        "    if (i >= n) return;\n"
        "    for (int a = 0; a < 2; a++)\n"
        "        for (int c = 0; c < 3; c++) tab[a][c] = s[i] * (size_t)(a + 1) + c;\n"
        "    r[i] = tab[i % 2][i % 3] - tab[1 - i % 2][2];\n",
        {"s": ("uint64", "in", U64), "r": ("uint64", "out", None)},
    ),
    # a local array carried through a loop whose trip count is read from data
    "data_loop_carry": (
        "const long long* v, const int* reps, long long* o, int n",
        "    long long acc[2] = {0, 0};\n"
        "    if (i >= n) return;\n"
        "    for (int k = 0; k < reps[i]; k++) {\n"
        "        acc[k & 1] += v[i] + k;\n"
        "        acc[0] ^= acc[1] << 1;\n"
        "    }\n"
        "    o[i] = acc[0] - acc[1];\n",
        {
            "v": ("int64", "in", I64),
            "reps": ("int32", "in", [0, 5]),
            "o": ("int64", "out", None),
        },
    ),
    # 32-bit buffers only: 64-bit products summed in a __shared__ tree, read back narrowed
    "shared_products_of_ints": (
        "const int* a, const int* b, int* hi, unsigned* lo, int n",
        "    __shared__ long long part[128];\n"
        "    part[threadIdx.x] = i < n ? (long long)a[i] * b[i] : 0LL;\n"
        "    __syncthreads();\n"
        "    for (int s = 64; s > 0; s >>= 1) {\n"
        "        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];\n"
        "        __syncthreads();\n"
        "    }\n"
        "    if (i < n) { hi[i] = (int)(part[0] >> 32); lo[i] = (unsigned)(part[i % 128] + i); }\n",
        {
            "a": ("int32", "in", [-(2**31), 2**31 - 1]),
            "b": ("int32", "in", [-(2**31), 2**31 - 1]),
            "hi": ("int32", "out", None),
            "lo": ("uint32", "out", None),
        },
    ),
    # 32-bit buffers only: a local array of unsigned long words mixed and folded to 32 bits
    "local_words_of_an_int_kernel": (
        "const unsigned* x, unsigned* y, int n",
        "    unsigned long h[2] = {0x9e3779b97f4a7c15UL, 7UL};\n"
        "    if (i >= n) return;\n"
        "    h[0] ^= x[i];\n    h[1] += (unsigned long)x[i] << 29;\n"
        "    h[i & 1] *= 0xbf58476d1ce4e5b9UL;\n"
        "    y[i] = (unsigned)(h[0] >> 32) ^ (unsigned)h[1];\n",
        {"x": ("uint32", "in", [0, 2**32 - 1]), "y": ("uint32", "out", None)},
    ),
    # a __shared__ size set by one thread from a bit count of a size, then searched with
    "shared_size_from_bit_count": (
        "const float* a, const float* z, int* r, const size_t m, int n",
        "    __shared__ size_t top;\n"
        "    if (threadIdx.x == 0) {\n"
        "        unsigned nbits = 0;\n"
        "        while (m >> nbits) nbits++;\n"
        "        top = 1ULL << (nbits - 1);\n"
        "    }\n"
        "    __syncthreads();\n"
        "    if (i >= n) return;\n"
        "    size_t p = top;\n"
        "    float v = z[i];\n"
        "    size_t at = (a[p] <= v) ? p : 0;\n"
        "    while (p >>= 1) {\n"
        "        size_t q = at | p;\n"
        "        size_t w = q < m ? q : m;\n"
        "        if (v >= a[w]) at = q;\n"
        "    }\n"
        "    r[i] = (int)at;\n",
        {
            "a": ("float32", "in", [0, 1], "m + 1"),
            "z": ("float32", "in", [0, 1]),
            "r": ("int32", "out", None),
        },
    ),
}


def _port(name: str, target: str, tmp: Path):
    params_c, body, tensors = KERNELS[name]
    params: dict = {
        k: tensor_param(list(spec[3:]) or ["n"], *spec[1::-1], spec[2])
        for k, spec in tensors.items()
    }
    params["n"] = 300
    if "const size_t m" in params_c:
        params["m"] = 40
    bdict = grid_binding(["ceil_div(n, 128)"], params, [{"n": 300}, {"n": 130}], block=128)
    cu = tmp / f"{name}.cu"
    cu.write_text(
        "#include <cstdint>\n"
        f"__global__ void k({params_c}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n"
    )
    return run_literal_exactly(cu, bdict, target, tmp)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_wide_local_arrays_port_exactly(name, tmp_path) -> None:
    run, points = _port(name, "nki", tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def test_wide_local_arrays_port_exactly_for_the_legacy_target(tmp_path) -> None:
    run, points = _port("lane_picked_words", "legacy", tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
