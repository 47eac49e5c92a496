"""64-bit integers in literal ports, bit-exact against the SIMT interpreter: buffers of
``unsigned long long`` / ``long long`` travel as uint32 limbs and per-thread 64-bit values are
computed as limb pairs (sums with carries, byte-column products, shifts, comparisons, bit counts,
conversions to and from 32-bit integers), over the whole 64-bit range of inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

TARGETS = ["nki", "legacy"]
U64 = [0, 2**64 - 1]
I64 = [-(2**63), 2**63 - 1]

#: name -> (parameters, body after ``int i = ...``, {parameter: (dtype, role, range[, extent])})
KERNELS = {
    # bit counting in 2-, 4- and 8-bit fields, folded by shifted sums
    "swar_fold": (
        "const unsigned long long* data, int* r, int n",
        "    if (i >= n) return;\n"
        "    unsigned long long x = data[i];\n"
        "    x -= (x >> 1) & 0x5555555555555555ULL;\n"
        "    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);\n"
        "    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;\n"
        "    x += x >> 8;\n    x += x >> 16;\n    x += x >> 32;\n"
        "    r[i] = x & 0x7f;\n",
        {"data": ("uint64", "in", U64), "r": ("int32", "out", None)},
    ),
    # the same counts summed by a multiplication, read from the top byte
    "swar_multiply": (
        "const unsigned long* words, int* counts, int n",
        "    if (i < n) {\n"
        "        unsigned long v = words[i];\n"
        "        v = v - ((v >> 1) & 0x5555555555555555UL);\n"
        "        v = (v & 0x3333333333333333UL) + ((v >> 2) & 0x3333333333333333UL);\n"
        "        v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fUL;\n"
        "        counts[i] = (int)((v * 0x0101010101010101UL) >> 56);\n"
        "    }\n",
        {"words": ("uint64", "in", U64), "counts": ("int32", "out", None)},
    ),
    "popcll_grid_stride": (
        "const unsigned long long* a, int* out, int n",
        "    for (int j = i; j < n; j += gridDim.x * blockDim.x)\n"
        "        out[j] = __popcll(a[j]) - __popcll(a[j] & 0xffffffffULL);\n",
        {"a": ("uint64", "in", U64), "out": ("int32", "out", None)},
    ),
    # a xor-shift-multiply mixer: 64-bit products modulo 2**64, written as 64-bit words
    "mix_hash": (
        "const unsigned long long* keys, unsigned long long* hashes, int n",
        "    if (i >= n) return;\n"
        "    unsigned long long z = keys[i] + 0x9e3779b97f4a7c15ULL * (unsigned long long)i;\n"
        "    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;\n"
        "    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;\n"
        "    hashes[i] = z ^ (z >> 31);\n",
        {"keys": ("uint64", "in", U64), "hashes": ("uint64", "out", None)},
    ),
    # signed 64-bit values: arithmetic shifts, comparisons, negation, selects, sign extension
    "signed_select": (
        "const long long* x, const int* y, long long* z, int n",
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (t < n) {\n"
        "        long long v = x[t];\n"
        "        long long w = y[t];\n"
        "        if (v < w) v = -v;\n"
        "        z[t] = (v >> 7) + (v > 0 ? w * w : ~w) - (v == w);\n"
        "    }\n",
        {
            "x": ("int64", "in", I64),
            "y": ("int32", "in", [-(2**31), 2**31 - 1]),
            "z": ("int64", "out", None),
        },
    ),
    # bytes of a word as 32-bit indices into per-byte counts
    "byte_fields": (
        "const unsigned long long* d, int* r, int n",
        "    if (i >= n) return;\n"
        "    unsigned long long x = d[i];\n"
        "    int s = 0;\n"
        "    for (int k = 0; k < 64; k += 8) s += (int)((x >> k) & 0xFF) * (k + 1);\n"
        "    r[i] = s + (int)(x >> 40) - (int)(x >> 33);\n",
        {"d": ("uint64", "in", U64), "r": ("int32", "out", None)},
    ),
    # conversions to fp32 (rounded once) in float arithmetic, and back (truncated)
    "float_round_trip": (
        "const long long* w, const float* f, float* g, long long* h, int n",
        "    if (i < n) {\n"
        "        float s = (float)w[i] + f[i] * (float)(w[i] >> 40);\n"
        "        unsigned long long u = (unsigned long long)w[i];\n"
        "        g[i] = s - (float)u * 0.25f;\n"
        "        long long t = (long long)(f[i] * 1.0e12f);\n"
        "        h[i] = t - (long long)(s * 0.001f);\n"
        "    }\n",
        {
            "w": ("int64", "in", I64),
            "f": ("float32", "in", [-1, 1]),
            "g": ("float32", "out", None),
            "h": ("int64", "out", None),
        },
    ),
    # bytes of a word picking entries of a table by subscript
    "byte_subscripts": (
        "const unsigned long long* words, const int* weights, int* out, int n",
        "    if (i >= n) return;\n"
        "    unsigned long long x = words[i];\n"
        "    out[i] = weights[x & 0xFF] + weights[(x >> 56) & 0xFF] * 3 + weights[x >> 60];\n",
        {
            "words": ("uint64", "in", U64),
            "weights": ("int32", "in", [-1000, 1000], 256),
            "out": ("int32", "out", None),
        },
    ),
    # uniform 64-bit values wrap modulo 2**64 like per-thread ones
    "uniform_wrap": (
        "const unsigned long long* a, unsigned long long* b, int n",
        "    if (i >= n) return;\n"
        "    unsigned long long big = 0xfedcba9876543210ULL;\n"
        "    unsigned long long k = big * (unsigned long long)(n + 7);\n"
        "    long long m = (long long)(k >> 1) * 4;\n"
        "    b[i] = (a[i] ^ k) + (unsigned long long)(m >> 3);\n",
        {"a": ("uint64", "in", U64), "b": ("uint64", "out", None)},
    ),
    # an index unravelled by extents read from data, reversed and gathered at (64-bit)
    "unravel_by_extents": (
        "const long long* ext, const float* x, float* y, int n",
        "    if (i >= n) return;\n"
        "    long long rest = i, off = 0;\n"
        "    for (int d = 0; d < 2; d++) {\n"
        "        long long e = ext[d];\n"
        "        long long c = rest % e;\n"
        "        rest = rest / e;\n"
        "        off = off * e + (e - 1 - c);\n"
        "    }\n"
        "    y[i] = x[off % n];\n",
        {
            "ext": ("int64", "in", [1, 9], 3),
            "x": ("float32", "in", [-1, 1]),
            "y": ("float32", "out", None),
        },
    ),
    # 64-bit elements gathered at indices read from data, then computed with
    "gather_by_data_index": (
        "const long long* a, long long* b, const int* at, int n",
        "    if (i < n) b[i] = a[at[i] % n] * 3 - 1;\n",
        {"a": ("int64", "in", I64), "b": ("int64", "out", None), "at": ("int32", "in", [0, 2**20])},
    ),
    # 64-bit stores at addresses read from data: the last writer in thread order stays
    "scatter_last_writer": (
        "const unsigned long long* a, unsigned long long* b, const int* at, int n",
        "    if (i < n) b[at[i] % n] = a[i] ^ (unsigned long long)i;\n",
        {"a": ("uint64", "in", U64), "b": ("uint64", "out", None), "at": ("int32", "in", [0, 999])},
    ),
    # a row chosen by a 64-bit value read from data moves the destination pointer
    "pointer_moved_by_a_wide_offset": (
        "const unsigned long long* src, unsigned long long* dst, const long long* loc, int n",
        "    if (i >= n) return;\n"
        "    const long long row = loc[i / 4];\n"
        "    unsigned long long* d = dst + row * 4;\n"
        "    d[i % 4] = src[i] + (unsigned long long)row;\n",
        {
            "src": ("uint64", "in", U64),
            "dst": ("uint64", "out", None),
            "loc": ("int64", "in", [0, 30]),
        },
    ),
    # a 64-bit __shared__ array: words exchanged between the threads of a block
    "shared_words": (
        "const unsigned long long* a, unsigned long long* b, int n",
        "    __shared__ unsigned long long s[128];\n"
        "    s[threadIdx.x] = i < n ? a[i] : 0ULL;\n    __syncthreads();\n"
        "    if (i < n) b[i] = s[127 - threadIdx.x] + (s[threadIdx.x] >> 7);\n",
        {"a": ("uint64", "in", U64), "b": ("uint64", "out", None)},
    ),
    # a 64-bit __shared__ scalar set by one thread, and a signed 2-D __shared__ array
    "shared_scalar_and_rows": (
        "const long long* a, long long* b, int n",
        "    __shared__ long long first;\n"
        "    __shared__ long long rows[2][64];\n"
        "    long long v = i < n ? a[i] : -1LL;\n"
        "    if (threadIdx.x == 0) first = v * 3;\n"
        "    rows[threadIdx.x / 64][threadIdx.x % 64] = v >> 3;\n"
        "    __syncthreads();\n"
        "    if (i < n) b[i] = (rows[1 - threadIdx.x / 64][63 - threadIdx.x % 64] ^ first) - v;\n",
        {"a": ("int64", "in", I64), "b": ("int64", "out", None)},
    ),
    # signed division and remainder by constants and by data, truncating toward zero
    "signed_divmod": (
        "const long long* a, const long long* b, long long* q, int n",
        "    if (i < n) {\n"
        "        long long d = b[i] | 1;\n"
        "        q[i] = a[i] / -7 + a[i] % 1000003LL - (a[i] >> 20) / d;\n"
        "    }\n",
        {
            "a": ("int64", "in", I64),
            "b": ("int64", "in", [-(2**40), 2**40]),
            "q": ("int64", "out", None),
        },
    ),
    # 64-bit values through device functions: parameters, locals and results are pairs
    "device_rotations": (
        "const unsigned long long* s, unsigned long long* out, int n",
        "    if (i < n) out[i] = rotl(s[i], 13) + mixed(s[i], (long long)i - 150);\n",
        {"s": ("uint64", "in", U64), "out": ("uint64", "out", None)},
        "__device__ unsigned long long rotl(unsigned long long x, int r) {\n"
        "    return (x << r) | (x >> (64 - r));\n}\n"
        "__device__ unsigned long long mixed(unsigned long long a, long long b) {\n"
        "    unsigned long long t = a * 5;\n    return t ^ (unsigned long long)(b * b * b);\n}\n",
    ),
    # an int64 table written from 32-bit indices, then updated in place
    "table_update": (
        "unsigned long long* table, const unsigned long long size",
        "    if (i < size) table[i] = (table[i] << 1) ^ ((long long)table[i] < 0 ? 0x7ULL : 0ULL)"
        " ^ i;\n",
        {"table": ("uint64", "inout", U64)},
    ),
}


def _port(name: str, target: str, tmp: Path):
    params_c, body, tensors = KERNELS[name][:3]
    helpers = KERNELS[name][3] if len(KERNELS[name]) > 3 else ""
    size = "size" if "size" in params_c else "n"
    params: dict = {
        k: tensor_param(list(spec[3:]) or [size], *spec[1::-1], spec[2])
        for k, spec in tensors.items()
    }
    params[size] = 300
    grid = "1" if name == "popcll_grid_stride" else f"ceil_div({size}, 128)"
    bdict = grid_binding([grid], params, [{size: 300}, {size: 130}], block=128)
    cu = tmp / f"{name}.cu"
    cu.write_text(
        helpers + f"__global__ void k({params_c}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n"
    )
    return run_literal_exactly(cu, bdict, target, tmp)


#: kernels whose per-thread divisions (64 compare-and-subtract steps each) make them slow to
#: simulate: the legacy target runs them in the slow tier only
SLOW = {"unravel_by_extents", "signed_divmod"}
CASES = [
    pytest.param(
        name, target, marks=[pytest.mark.slow] if name in SLOW and target == "legacy" else []
    )
    for name in sorted(KERNELS)
    for target in TARGETS
]


@pytest.mark.parametrize(("name", "target"), CASES)
def test_wide_ints_port_exactly(name, target, tmp_path) -> None:
    run, points = _port(name, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


#: operations on 64-bit values with no exact emulation: refused (C2N2301) with the reason
REFUSED = {
    "long_local_array_at_a_per_thread_index": (
        "const unsigned long long* a, unsigned long long* b, int n",
        "    unsigned long long w[80] = {0};\n"
        "    if (i < n) { w[i % 80] = a[i]; b[i] = w[0] + w[1]; }\n",
        "a local array of 80 elements indexed by a per-thread value",
    ),
    "atomic_xor": (
        "unsigned long long* t, int n",
        "    if (i < n) atomicXor(&t[(i * 7) % n], (unsigned long long)i);\n",
        "atomicXor",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_wide_operations_without_emulation_are_refused(name, tmp_path) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file

    params_c, body, reason = REFUSED[name]
    params: dict = {"n": 300}
    for decl in params_c.split(", "):
        ty, pname = decl.rsplit(" ", 1)
        if "*" not in pname and "*" not in ty:
            continue
        pname = pname.lstrip("*")
        dt = (
            "int32"
            if "int*" in ty and "long" not in ty
            else ("uint64" if "unsigned" in ty else "int64")
        )
        role = "in" if "const" in ty else ("inout" if pname == "t" else "out")
        params[pname] = tensor_param(["n"], role, dt)
    bdict = grid_binding(["ceil_div(n, 128)"], params, [{"n": 300}], block=128)
    cu = tmp_path / f"{name}.cu"
    cu.write_text(
        f"__global__ void k({params_c}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n"
    )
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, lowering="literal")
    assert res.source is None
    msgs = [d.message for d in res.diagnostics if d.code == "C2N2301"]
    assert msgs and reason in msgs[0], [d.render() for d in res.diagnostics]
