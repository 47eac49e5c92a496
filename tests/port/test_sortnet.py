"""Block-local compare-exchange sorting networks in shared memory: recognised by running the
kernel (cuda2nki.lift.sortnet_match), ported as tiled stages (cuda2nki.codegen.sortnet).

Each kernel below spells a network differently (partner ``i ^ j`` or ``2*j*(t/j) + t%j``, the
direction from ``i & k`` or a flipped first merge step, odd-even merges, a grid-stride loop over
the segment, swaps through a helper or inline, segment sizes from macros and templates,
descending orders, keys alone or with values, a store through another index); the ports are
checked against the CUDA kernel bit for bit.  Kernels that only look like sorts stay literal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.frontend import parse_file
from cuda2nki.lift import sortnets as S
from cuda2nki.lift.sortnet_boxes import expand, stage_boxes
from cuda2nki.lift.sortnet_match import recognise
from cuda2nki.pipeline import port_file

# keys with values, float keys, descending, partner i ^ j, a grid-stride loop over the segment
KV_DESC = """
#define SEG 256
__global__ void kv_desc(const float *in_keys, const int *in_vals, float *out_keys,
                        int *out_vals, int count) {
    __shared__ float sk[SEG];
    __shared__ int sv[SEG];
    int base = blockIdx.x * SEG;
    for (int e = threadIdx.x; e < SEG; e += blockDim.x) {
        sk[e] = in_keys[base + e];
        sv[e] = in_vals[base + e];
    }
    __syncthreads();
    for (int k = 2; k <= SEG; k *= 2) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < SEG; i += blockDim.x) {
                int p = i ^ j;
                if (p > i) {
                    bool down = (i & k) == 0;
                    float a = sk[i], b = sk[p];
                    if (down ? (a < b) : (a > b)) {
                        sk[i] = b; sk[p] = a;
                        int t = sv[i]; sv[i] = sv[p]; sv[p] = t;
                    }
                }
            }
            __syncthreads();
        }
    }
    for (int e = threadIdx.x; e < SEG; e += blockDim.x) {
        out_keys[base + e] = sk[e];
        out_vals[base + e] = sv[e];
    }
}
"""
KV_DESC_BINDING = {
    "kernel": "kv_desc",
    "launch": {"grid": ["count / 256"], "block": [64]},
    "params": {
        "in_keys": {"shape": ["count"], "dtype": "float32", "role": "in"},
        "in_vals": {"shape": ["count"], "dtype": "int32", "role": "in"},
        "out_keys": {"shape": ["count"], "dtype": "float32", "role": "out"},
        "out_vals": {"shape": ["count"], "dtype": "int32", "role": "out"},
        "count": 768,
    },
    "check": {"shapes": [{"count": 256}]},
}

# the same with 16-key segments: several segments share a partition (rows of 512 B), and a
# probe segment of specials without a NaN holds runs of equal infinities
KV_DESC16 = KV_DESC.replace("#define SEG 256", "#define SEG 16")
KV_DESC16_BINDING = {
    **KV_DESC_BINDING,
    "launch": {"grid": ["count / 16"], "block": [8]},
    "params": {**KV_DESC_BINDING["params"], "count": 4096},
    "check": {"shapes": [{"count": 160}]},
}

# odd-even merge sort, float keys sorted in place, one comparator per thread, the segment
# twice the block
ODD_EVEN = """
#define THREADS 32
__global__ void oe_sort(float *data, int segments) {
    __shared__ float buf[2 * THREADS];
    int t = threadIdx.x;
    float *seg = data + blockIdx.x * 2 * THREADS;
    buf[t] = seg[t];
    buf[t + THREADS] = seg[t + THREADS];
    for (int half = 1; half < 2 * THREADS; half *= 2) {
        for (int d = half; d > 0; d /= 2) {
            __syncthreads();
            int r = t % d;
            int lo = 2 * d * (t / d) + r;
            if (d != half) lo += d;
            int block_of_lo = lo / (2 * half), block_of_hi = (lo + d) / (2 * half);
            if (lo + d < 2 * THREADS && block_of_lo == block_of_hi) {
                float x = buf[lo], y = buf[lo + d];
                if (x > y) { buf[lo] = y; buf[lo + d] = x; }
            }
        }
    }
    __syncthreads();
    seg[t] = buf[t];
    seg[t + THREADS] = buf[t + THREADS];
}
"""
ODD_EVEN_BINDING = {
    "kernel": "oe_sort",
    "launch": {"grid": ["segments"], "block": [32]},
    "params": {
        "data": {"shape": ["segments * 64"], "dtype": "float32", "role": "inout"},
        "segments": 5,
    },
    "check": {"shapes": [{"segments": 2}]},
}

# a template segment size, a flipped first merge step (every comparator ascending), uint keys
# with uint values, a swap helper taking references, a store through a reversed index
FLIP = """
__device__ void order(unsigned &a, unsigned &b, unsigned &va, unsigned &vb) {
    if (a > b) { unsigned t = a; a = b; b = t; t = va; va = vb; vb = t; }
}
template <int N>
__global__ void flip_sort(const unsigned *k_in, const unsigned *v_in, unsigned *k_out,
                          unsigned *v_out) {
    __shared__ unsigned ks[N];
    __shared__ unsigned vs[N];
    unsigned t = threadIdx.x;
    unsigned off = blockIdx.x * N;
    ks[t] = k_in[off + t];
    vs[t] = v_in[off + t];
    ks[t + N / 2] = k_in[off + t + N / 2];
    vs[t + N / 2] = v_in[off + t + N / 2];
    for (unsigned size = 2; size <= N; size *= 2) {
        __syncthreads();
        unsigned g = t / (size / 2), r = t % (size / 2);
        unsigned a = g * size + r, b = g * size + size - 1 - r;
        order(ks[a], ks[b], vs[a], vs[b]);
        for (unsigned s = size / 4; s > 0; s /= 2) {
            __syncthreads();
            unsigned lo = 2 * s * (t / s) + t % s;
            order(ks[lo], ks[lo + s], vs[lo], vs[lo + s]);
        }
    }
    __syncthreads();
    unsigned back = N / 2 - 1 - t;
    k_out[off + back] = ks[back];
    v_out[off + back] = vs[back];
    k_out[off + N - 1 - back] = ks[N - 1 - back];
    v_out[off + N - 1 - back] = vs[N - 1 - back];
}
void sort_pairs(const unsigned *k, const unsigned *v, unsigned *ko, unsigned *vo, int n) {
    flip_sort<128><<<n / 128, 64>>>(k, v, ko, vo);
}
"""
FLIP_BINDING = {
    "kernel": "flip_sort",
    "launch": {"grid": ["n / 128"], "block": [64]},
    "params": {
        "k_in": {"shape": ["n"], "dtype": "uint32", "role": "in"},
        "v_in": {"shape": ["n"], "dtype": "uint32", "role": "in"},
        "k_out": {"shape": ["n"], "dtype": "uint32", "role": "out"},
        "v_out": {"shape": ["n"], "dtype": "uint32", "role": "out"},
        "n": 384,
    },
    "check": {"shapes": [{"n": 128}]},
}

# each block sorts its 128 keys as four independent 32-key chunks; ties swap when descending
CHUNKS = """
#define CHUNK 32
#define PER_BLOCK 128
__global__ void chunk_sort(const int *src, const int *tag, int *dst, int *dst_tag, int total) {
    __shared__ int k[PER_BLOCK];
    __shared__ int v[PER_BLOCK];
    int base = blockIdx.x * PER_BLOCK;
    int i = threadIdx.x;
    k[i] = src[base + i];
    v[i] = tag[base + i];
    for (int width = 2; width <= CHUNK; width <<= 1) {
        for (int dist = width / 2; dist >= 1; dist /= 2) {
            __syncthreads();
            int mate = i ^ dist;
            if (mate > i) {
                bool rising = (i & width) == 0 || width == CHUNK;
                int a = k[i], b = k[mate];
                if ((a > b) == rising) {
                    k[i] = b; k[mate] = a;
                    int t = v[i]; v[i] = v[mate]; v[mate] = t;
                }
            }
        }
    }
    __syncthreads();
    dst[base + i] = k[i];
    dst_tag[base + i] = v[i];
}
"""
CHUNKS_BINDING = {
    "kernel": "chunk_sort",
    "launch": {"grid": ["total / 128"], "block": [128]},
    "params": {
        "src": {"shape": ["total"], "dtype": "int32", "role": "in"},
        "tag": {"shape": ["total"], "dtype": "int32", "role": "in"},
        "dst": {"shape": ["total"], "dtype": "int32", "role": "out"},
        "dst_tag": {"shape": ["total"], "dtype": "int32", "role": "out"},
        "total": 384,
    },
}

# the block sorts of a global bitonic sort: directions from a bit of the global position, so
# even-numbered blocks end ascending and odd-numbered ones descending (partner 2*j*(t/j) + t%j)
ALTERNATE = """
#define BLOCK_KEYS 64
__global__ void alt_sort(const float *in, float *out, int n) {
    __shared__ float buf[BLOCK_KEYS];
    int t = threadIdx.x;
    int g0 = blockIdx.x * BLOCK_KEYS;
    buf[t] = in[g0 + t];
    buf[t + 32] = in[g0 + t + 32];
    for (int k = 2; k <= BLOCK_KEYS; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            __syncthreads();
            int lo = 2 * j * (t / j) + t % j;
            bool up = ((g0 + lo) & k) == 0;
            float a = buf[lo], b = buf[lo + j];
            if (up ? a > b : a < b) { buf[lo] = b; buf[lo + j] = a; }
        }
    }
    __syncthreads();
    out[g0 + t] = buf[t];
    out[g0 + t + 32] = buf[t + 32];
}
"""
ALTERNATE_BINDING = {
    "kernel": "alt_sort",
    "launch": {"grid": ["n / 64"], "block": [32]},
    "params": {
        "in": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "out": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 320,
    },
    "check": {"shapes": [{"n": 128}]},
}

# a bitonic sort with one stage in the wrong direction: not a sorting network of any family
BROKEN = ODD_EVEN.replace("if (x > y)", "if ((d == 1 && half == 2) ? (x < y) : (x > y))")

# a size scalar that also steers the network: each block sorts runs of `run` keys (merges of
# sizes below `run`, then the final one), and `run` sizes the launch too
STEERED = """
__global__ void run_sort(const unsigned *in, unsigned *out, unsigned run) {
    __shared__ unsigned s[128];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    s[t + 64] = in[blockIdx.x * 128 + t + 64];
    for (unsigned size = 2; size < run; size <<= 1) {
        unsigned up = (t & (size / 2)) == 0;
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            unsigned pos = 2 * t - (t & (stride - 1));
            unsigned a = s[pos], b = s[pos + stride];
            if ((a > b) == up) { s[pos] = b; s[pos + stride] = a; }
        }
    }
    for (unsigned stride = run / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        unsigned pos = 2 * t - (t & (stride - 1));
        unsigned a = s[pos], b = s[pos + stride];
        if (a > b) { s[pos] = b; s[pos + stride] = a; }
    }
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[t];
    out[blockIdx.x * 128 + t + 64] = s[t + 64];
}
"""
STEERED_BINDING = {
    "kernel": "run_sort",
    "launch": {"grid": ["2 * run"], "block": [64]},
    "params": {
        "in": {"shape": ["2 * run", 128], "dtype": "uint32", "role": "in"},
        "out": {"shape": ["2 * run", 128], "dtype": "uint32", "role": "out"},
        "run": 8,
    },
}

# a tree reduction in shared memory: a barrier in a loop, but not a sort
REDUCE = """
__global__ void tree_sum(const int *in, int *out, int n) {
    __shared__ int part[64];
    int t = threadIdx.x;
    part[t] = in[blockIdx.x * 64 + t];
    for (int s = 32; s > 0; s /= 2) {
        __syncthreads();
        if (t < s) part[t] += part[t + s];
    }
    __syncthreads();
    out[blockIdx.x * 64 + t] = part[0];
}
"""
REDUCE_BINDING = {
    "kernel": "tree_sum",
    "launch": {"grid": ["n / 64"], "block": [64]},
    "params": {
        "in": {"shape": ["n"], "dtype": "int32", "role": "in"},
        "out": {"shape": ["n"], "dtype": "int32", "role": "out"},
        "n": 256,
    },
}

CASES = {
    "kv_desc": (KV_DESC, KV_DESC_BINDING, ("bitonic", False, 1)),
    "kv_desc16": (KV_DESC16, KV_DESC16_BINDING, ("bitonic", False, 1)),
    "oe_sort": (ODD_EVEN, ODD_EVEN_BINDING, ("odd-even-merge", True, 0)),
    "flip_sort": (FLIP, FLIP_BINDING, ("bitonic-flip", True, 1)),
    "chunk_sort": (CHUNKS, CHUNKS_BINDING, ("bitonic", True, 1)),
    "alt_sort": (ALTERNATE, ALTERNATE_BINDING, ("bitonic", True, 0)),
}


GROUPS = {"kv_desc16": 8, "oe_sort": 2}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(text)
    return cu


@pytest.mark.parametrize("n", [2, 4, 16, 64, 512])
def test_every_family_sorts_and_tiles_into_few_boxes(n: int) -> None:
    rng = np.random.default_rng(n)
    keys = np.concatenate([rng.integers(0, 2, (64, n)), rng.integers(0, 9, (64, n))])
    for family, up, stages in S.networks(n):
        got, _ = S.apply(stages, keys, (), S.UP_PREDICATES[0], S.DOWN_PREDICATES[0])
        want = np.sort(keys, axis=1)
        assert (got == (want if up else want[:, ::-1])).all(), family
        for stage in stages:
            boxes = stage_boxes(stage)
            assert boxes is not None and len(boxes) <= 2, family
            assert sorted(c for b in boxes for c in expand(b)) == sorted(stage), family


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_network_is_recognised(case: str, tmp_path: Path) -> None:
    text, bind, (family, ascending, values) = CASES[case]
    cu = _write(tmp_path, bind["kernel"], text)
    net = recognise(parse_file(cu), bind["kernel"], binding_from_dict(bind))
    assert net is not None
    assert (net.family, net.ascending, len(net.values)) == (family, ascending, values)
    assert net.m == (32 if case == "chunk_sort" else net.n)
    odd = net.odd and (net.odd.family, net.odd.ascending)
    assert odd == (("bitonic-turned", False) if case == "alt_sort" else None)
    if case == "chunk_sort":  # `(a > b) == rising`: a descending comparator swaps equal keys
        assert net.down(np.array([7]), np.array([7]))[0]


def test_float_keys_pin_the_comparisons_nan_and_signed_zero_take(tmp_path: Path) -> None:
    """``down ? (a < b) : (a > b)``: a NaN never compares, so it is never exchanged."""
    cu = _write(tmp_path, "kv_desc", KV_DESC)
    net = recognise(parse_file(cu), "kv_desc", binding_from_dict(KV_DESC_BINDING))
    assert net is not None
    assert (net.up, net.down) == (S.Predicate("greater"), S.Predicate("less"))
    # the negated spelling swaps a NaN away, so it is another predicate
    negated = KV_DESC.replace("(a < b) : (a > b)", "!(a >= b) : !(a <= b)")
    cu = _write(tmp_path, "kv_desc", negated)
    net = recognise(parse_file(cu), "kv_desc", binding_from_dict(KV_DESC_BINDING))
    assert net is not None
    assert (net.up, net.down) == (
        S.Predicate("less_equal", True),
        S.Predicate("greater_equal", True),
    )


@pytest.mark.parametrize(
    ("name", "text", "bind"),
    [
        ("oe_sort", BROKEN, ODD_EVEN_BINDING),
        ("tree_sum", REDUCE, REDUCE_BINDING),
        ("run_sort", STEERED, STEERED_BINDING),
    ],
)
def test_what_is_not_a_sorting_network_stays_unclaimed(
    name: str, text: str, bind: dict, tmp_path: Path
) -> None:
    cu = _write(tmp_path, name, text)
    assert recognise(parse_file(cu), bind["kernel"], binding_from_dict(bind)) is None


def test_the_legacy_target_keeps_the_literal_port(tmp_path: Path) -> None:
    cu = _write(tmp_path, "oe_sort", ODD_EVEN)
    res = port_file(cu, binding=binding_from_dict(ODD_EVEN_BINDING), target="legacy")
    assert res.source is not None and res.literal


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_port_passes_check(case: str, tmp_path: Path) -> None:
    text, bind, _ = CASES[case]
    cu = _write(tmp_path, bind["kernel"], text)
    binding = binding_from_dict(bind)
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal and res.idiom == "sort"
    # segments per partition: DMA rows of 512 B (16 or 64 fp32 keys per segment), else one
    assert f"_GROUP = {GROUPS.get(case, 1)} " in res.source
    port = tmp_path / f"{case}_port.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above


def test_a_big_launch_is_probed_on_a_few_blocks(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """A fixed launch of 512 blocks is probed on its first six (arrays cut to them): the
    network shows there, and a port's recognition does not simulate the whole launch."""
    from cuda2nki.simt import runner

    grids = []
    real = runner.run_kernel

    def spy(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        grids.append(kw["grid"])
        return real(*args, **kw)

    monkeypatch.setattr(runner, "run_kernel", spy)
    bind = {
        "kernel": "alt_sort",
        "launch": {"grid": [512], "block": [32]},
        "params": {
            "in": {"shape": [512 * 64], "dtype": "float32", "role": "in"},
            "out": {"shape": [512 * 64], "dtype": "float32", "role": "out"},
        },
    }
    text = ALTERNATE.replace(", int n)", ")")
    cu = _write(tmp_path, "alt_sort", text)
    net = recognise(parse_file(cu), "alt_sort", binding_from_dict(bind))
    assert net is not None and net.odd is not None
    assert grids and all(g[0] <= 6 for g in grids), grids
