"""Atomics under conflict and warp shuffles/votes, including partial warps."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from simt_helpers import run


def test_histogram_with_conflicting_atomic_adds() -> None:
    src = """
    __global__ void hist(const int* x, unsigned int* bins, int n, int nbins) {
        __shared__ unsigned int local[16];
        if (threadIdx.x < nbins) local[threadIdx.x] = 0;
        __syncthreads();
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
            atomicAdd(&local[x[i] % nbins], 1u);
        __syncthreads();
        if (threadIdx.x < nbins) atomicAdd(bins + threadIdx.x, local[threadIdx.x]);
    }"""
    x = np.random.default_rng(0).integers(0, 1000, 5000).astype(np.int32)
    bins = run(src, grid=(4,), block=(128,), x=x, bins=np.zeros(16, np.uint32), n=5000, nbins=16)[
        "bins"
    ]
    np.testing.assert_array_equal(bins, np.bincount(x % 16, minlength=16))


def test_atomic_add_returns_old_values_in_thread_order() -> None:
    src = """
    __global__ void k(int* counter, int* slot, float* acc, const float* v) {
        slot[threadIdx.x] = atomicAdd(counter, 1);
        atomicAdd(acc, v[threadIdx.x]);
    }"""
    v = np.random.default_rng(1).standard_normal(64).astype(np.float32)
    res = run(
        src,
        block=(64,),
        counter=np.zeros(1, np.int32),
        slot=np.zeros(64, np.int32),
        acc=np.zeros(1, np.float32),
        v=v,
    )
    np.testing.assert_array_equal(res["slot"], np.arange(64))
    assert res["counter"][0] == 64
    seq = np.float32(0)
    for x in v:
        seq = np.float32(seq + x)
    assert res["acc"][0] == seq


def test_atomic_max_min_exch_cas_inc() -> None:
    src = """
    __global__ void k(const int* v, int* mx, int* mn, int* ex, int* old, int* lock, unsigned* ring) {
        int t = threadIdx.x;
        atomicMax(mx, v[t]);
        atomicMin(mn, v[t]);
        old[t] = atomicExch(ex, t);
        if (atomicCAS(lock, 0, t + 1) == 0) ex[1] = t;
        atomicInc(ring, 4u);
    }"""
    v = np.random.default_rng(2).integers(-100, 100, 40).astype(np.int32)
    res = run(
        src,
        block=(40,),
        v=v,
        mx=np.full(1, -1000, np.int32),
        mn=np.full(1, 1000, np.int32),
        ex=np.full(2, -1, np.int32),
        old=np.zeros(40, np.int32),
        lock=np.zeros(1, np.int32),
        ring=np.zeros(1, np.uint32),
    )
    assert res["mx"][0] == v.max() and res["mn"][0] == v.min()
    np.testing.assert_array_equal(res["old"], [-1, *range(39)])
    assert res["ex"][0] == 39 and res["ex"][1] == 0 and res["lock"][0] == 1
    assert res["ring"][0] == 40 % 5


def test_float_atomic_max_via_cas_loop_converges() -> None:
    src = """
    __device__ float atomicMaxFloat(float* addr, float value) {
        int* a = (int*)addr;
        int old = *a, assumed;
        do {
            assumed = old;
            if (__int_as_float(assumed) >= value) break;
            old = atomicCAS(a, assumed, __float_as_int(value));
        } while (assumed != old);
        return __int_as_float(old);
    }
    __global__ void k(const float* v, float* m) { atomicMaxFloat(m, v[blockIdx.x * blockDim.x + threadIdx.x]); }
    """
    v = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    m = run(src, grid=(4,), block=(64,), v=v, m=np.full(1, -np.inf, np.float32))["m"]
    assert m[0] == v.max()


WARP = """
__global__ void k(const float* x, float* down, float* up, float* xr, float* idx, float* wsum,
                  unsigned* bal, int* anyv, int* allv) {
    int t = threadIdx.x;
    float v = x[t];
    down[t] = __shfl_down_sync(0xffffffff, v, 3);
    up[t] = __shfl_up_sync(0xffffffff, v, 2, 8);
    xr[t] = __shfl_xor_sync(0xffffffff, v, 5);
    idx[t] = __shfl_sync(0xffffffff, v, 7, 16);
    float s = v;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    wsum[t] = s;
    bal[t] = __ballot_sync(0xffffffff, v > 0.0f);
    anyv[t] = __any_sync(0xffffffff, v > 2.0f);
    allv[t] = __all_sync(0xffffffff, v > -3.0f);
}
"""


def test_shuffles_and_votes_full_warps() -> None:
    x = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    z = {k: np.zeros(64, np.float32) for k in ("down", "up", "xr", "idx", "wsum")}
    res = run(
        WARP,
        block=(64,),
        x=x,
        bal=np.zeros(64, np.uint32),
        anyv=np.zeros(64, np.int32),
        allv=np.zeros(64, np.int32),
        **z,
    )
    lane = np.arange(64) % 32
    base = np.arange(64) - lane
    np.testing.assert_array_equal(
        res["down"], np.where(lane + 3 < 32, x[base + np.minimum(lane + 3, 31)], x)
    )
    seg = lane - lane % 8
    np.testing.assert_array_equal(
        res["up"], np.where(lane - 2 >= seg, x[np.maximum(base + lane - 2, 0)], x)
    )
    np.testing.assert_array_equal(res["xr"], x[base + (lane ^ 5)])
    np.testing.assert_array_equal(res["idx"], x[base + (lane - lane % 16) + 7])
    for w in range(2):
        xs = x[w * 32 : (w + 1) * 32].copy()
        for o in (16, 8, 4, 2, 1):
            xs = xs + xs[np.arange(32) ^ o]
        np.testing.assert_array_equal(res["wsum"][w * 32 : (w + 1) * 32], xs)
        bits = sum(1 << i for i in range(32) if x[w * 32 + i] > 0)
        assert np.all(res["bal"][w * 32 : (w + 1) * 32] == bits)
        assert np.all(
            res["anyv"][w * 32 : (w + 1) * 32] == int(np.any(x[w * 32 : (w + 1) * 32] > 2))
        )
        assert np.all(
            res["allv"][w * 32 : (w + 1) * 32] == int(np.all(x[w * 32 : (w + 1) * 32] > -3))
        )


def test_partial_warp_ballot_and_shuffle_warn() -> None:
    src = """
    __global__ void k(unsigned* bal, float* d, const float* x) {
        int t = threadIdx.x;
        bal[t] = __ballot_sync(0xffffffff, 1);
        d[t] = __shfl_down_sync(0xffffffff, x[t], 8);
    }"""
    x = np.arange(40, dtype=np.float32)
    res = run(
        src, block=(40,), full=True, bal=np.zeros(40, np.uint32), d=np.zeros(40, np.float32), x=x
    )
    out = res.outputs
    assert np.all(out["bal"][:32] == 0xFFFFFFFF) and np.all(out["bal"][32:] == 0xFF)
    # lanes 32..39 form a partial warp of 8: lane+8 does not exist -> own value, with a warning
    np.testing.assert_array_equal(out["d"][32:], x[32:])
    np.testing.assert_array_equal(out["d"][:24], x[8:32])
    assert [d.code for d in res.diagnostics] == ["C2N1512"]


def test_cooperative_groups_tile_reduce() -> None:
    src = """
    #include <cooperative_groups.h>
    #include <cooperative_groups/reduce.h>
    namespace cg = cooperative_groups;
    __global__ void k(const int* x, int* out) {
        cg::thread_block block = cg::this_thread_block();
        cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
        int v = x[block.thread_rank()];
        out[block.thread_rank()] = cg::reduce(tile, v, cg::plus<int>());
        block.sync();
    }"""
    x = np.arange(32, dtype=np.int32)
    out = run(src, block=(32,), x=x, out=np.zeros(32, np.int32))["out"]
    np.testing.assert_array_equal(out, np.repeat(x.reshape(4, 8).sum(1), 8))


SHFL_PROP = """
__global__ void k(const int* x, int* out, int delta, int width, int limit) {
    int t = threadIdx.x;
    int v = x[t];
    int r = -1;
    if (t < limit) {
        r = KIND(0xffffffff, v, delta, width);
    }
    out[t] = r;
}
"""


def _shfl_ref(kind: str, x: np.ndarray, delta: int, width: int, limit: int, tpb: int) -> list[int]:
    out = []
    for t in range(len(x)):
        if t >= limit:
            out.append(-1)
            continue
        lane, base = t % 32, t - t % 32
        seg0 = lane - lane % width
        if kind == "__shfl_sync":
            src = seg0 + delta % width
        elif kind == "__shfl_up_sync":
            src = lane - delta if lane - delta >= seg0 else lane
        elif kind == "__shfl_down_sync":
            src = lane + delta if lane + delta < seg0 + width else lane
        else:
            src = lane ^ delta if (lane ^ delta) < seg0 + width else lane
        k = base + src
        # a missing (partial warp) or inactive source lane: the caller's own value
        out.append(int(x[k]) if k < tpb and k < limit else int(x[t]))
    return out


@settings(max_examples=25, deadline=None)
@given(
    kind=st.sampled_from(["__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"]),
    delta=st.integers(0, 31),
    width=st.sampled_from([1, 2, 4, 8, 16, 32]),
    tpb=st.integers(1, 96),
    limit=st.integers(0, 96),
)
def test_shuffle_semantics_property(
    kind: str, delta: int, width: int, tpb: int, limit: int
) -> None:
    from cuda2nki.simt import run_kernel

    tu = _shfl_tu(kind)
    x = np.arange(100, 100 + tpb, dtype=np.int32)
    out = run_kernel(
        tu,
        "k",
        grid=(1,),
        block=(tpb,),
        args={
            "x": x,
            "out": np.zeros(tpb, np.int32),
            "delta": delta,
            "width": width,
            "limit": limit,
        },
    )["out"]
    assert out.tolist() == _shfl_ref(kind, x, delta, width, limit, tpb)


_TUS: dict = {}


def _shfl_tu(kind: str):
    from simt_helpers import tu_of

    if kind not in _TUS:
        _TUS[kind] = tu_of(SHFL_PROP.replace("KIND", kind))
    return _TUS[kind]


ATOMIC_PROP = """
__global__ void k(const int* addr, const TYPE* val, const TYPE* cmp, TYPE* mem, TYPE* old) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    old[t] = CALL;
}
"""
ATOMIC_CALLS = {
    "add": "atomicAdd(mem + addr[t], val[t])",
    "sub": "atomicSub(mem + addr[t], val[t])",
    "max": "atomicMax(&mem[addr[t]], val[t])",
    "min": "atomicMin(&mem[addr[t]], val[t])",
    "exch": "atomicExch(&mem[addr[t]], val[t])",
    "cas": "atomicCAS(&mem[addr[t]], cmp[t], val[t])",
    "and": "atomicAnd(&mem[addr[t]], val[t])",
    "or": "atomicOr(&mem[addr[t]], val[t])",
    "xor": "atomicXor(&mem[addr[t]], val[t])",
    "inc": "atomicInc(&mem[addr[t]], val[t])",
    "dec": "atomicDec(&mem[addr[t]], val[t])",
}
_ATUS: dict = {}


def _atomic_step(kind: str, cur, v, cmpv, dt):
    c, x = int(cur) if dt.kind in "iu" else cur, int(v) if dt.kind in "iu" else v
    bits = dt.itemsize * 8
    if kind == "add":
        r = c + x
    elif kind == "sub":
        r = c - x
    elif kind == "max":
        r = max(c, x)
    elif kind == "min":
        r = min(c, x)
    elif kind == "exch":
        r = x
    elif kind == "cas":
        r = x if c == int(cmpv) else c
    elif kind == "and":
        r = c & x
    elif kind == "or":
        r = c | x
    elif kind == "xor":
        r = c ^ x
    elif kind == "inc":
        r = 0 if c >= x else c + 1
    else:
        r = x if (c == 0 or c > x) else c - 1
    if dt.kind in "iu":
        r &= (1 << bits) - 1
        if dt.kind == "i" and r >= 1 << (bits - 1):
            r -= 1 << bits
        return dt.type(r)
    return dt.type(np.float32(c) + np.float32(x)) if kind == "add" else dt.type(r)


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(sorted(ATOMIC_CALLS)),
    ty=st.sampled_from(["int", "unsigned", "float"]),
    n=st.integers(1, 200),
    slots=st.integers(1, 6),
    seed=st.integers(0, 1000),
)
def test_atomics_serialise_in_thread_order(
    kind: str, ty: str, n: int, slots: int, seed: int
) -> None:
    from simt_helpers import tu_of

    from cuda2nki.simt import run_kernel

    if ty == "float" and kind not in ("add", "exch"):
        return  # CUDA has no float atomicMax/And/...; float CAS is done through int
    if ty != "unsigned" and kind in ("inc", "dec"):
        return
    dt = {
        "int": np.dtype(np.int32),
        "unsigned": np.dtype(np.uint32),
        "float": np.dtype(np.float32),
    }[ty]
    key = (kind, ty)
    if key not in _ATUS:
        _ATUS[key] = tu_of(ATOMIC_PROP.replace("TYPE", ty).replace("CALL", ATOMIC_CALLS[kind]))
    rng = np.random.default_rng(seed)
    addr = rng.integers(0, slots, n).astype(np.int32)
    if dt.kind == "f":
        val = rng.standard_normal(n).astype(dt)
    else:
        val = rng.integers(0, 12, n).astype(dt)
    mem0 = (rng.integers(0, 12, slots) if dt.kind != "f" else rng.standard_normal(slots)).astype(dt)
    cmpv = np.where(rng.random(n) < 0.5, mem0[addr], val).astype(dt)
    out = run_kernel(
        _ATUS[key],
        "k",
        grid=((n + 63) // 64,),
        block=(64,),
        args={
            "addr": np.pad(addr, (0, 64 - n % 64 if n % 64 else 0)),
            "val": np.pad(val, (0, 64 - n % 64 if n % 64 else 0)),
            "cmp": np.pad(cmpv, (0, 64 - n % 64 if n % 64 else 0)),
            "mem": np.concatenate([mem0, np.zeros(1, dt)]),
            "old": np.zeros(n + (64 - n % 64 if n % 64 else 0), dt),
        },
    )
    # padding threads (t >= n) address slot 0 with value 0; replay them in order too
    total = len(out["old"])
    a_all = np.pad(addr, (0, total - n))
    v_all = np.pad(val, (0, total - n))
    c_all = np.pad(cmpv, (0, total - n))
    mem = np.concatenate([mem0, np.zeros(1, dt)])
    want_old = []
    for t in range(total):
        cur = mem[a_all[t]]
        want_old.append(cur)
        mem[a_all[t]] = _atomic_step(kind, cur, v_all[t], c_all[t], dt)
    np.testing.assert_array_equal(out["old"], np.array(want_old, dt))
    np.testing.assert_array_equal(out["mem"], mem)


VOTE_PROP = """
__global__ void k(const int* p, unsigned* bal, int* anyv, int* allv, unsigned* act, int limit, unsigned mask) {
    int t = threadIdx.x;
    if (t < limit) {
        bal[t] = __ballot_sync(mask, p[t]);
        anyv[t] = __any_sync(mask, p[t]);
        allv[t] = __all_sync(mask, p[t]);
        act[t] = __activemask();
    }
}
"""


@settings(max_examples=25, deadline=None)
@given(
    tpb=st.integers(1, 80),
    limit=st.integers(0, 80),
    mask=st.integers(0, 2**32 - 1),
    seed=st.integers(0, 100),
)
def test_vote_semantics_property(tpb: int, limit: int, mask: int, seed: int) -> None:
    from cuda2nki.simt import run_kernel

    if "vote" not in _TUS:
        from simt_helpers import tu_of

        _TUS["vote"] = tu_of(VOTE_PROP)
    p = (np.random.default_rng(seed).random(tpb) < 0.5).astype(np.int32)
    u, i = (lambda: np.zeros(tpb, np.uint32)), (lambda: np.zeros(tpb, np.int32))
    out = run_kernel(
        _TUS["vote"],
        "k",
        grid=(1,),
        block=(tpb,),
        args={
            "p": p,
            "bal": u(),
            "anyv": i(),
            "allv": i(),
            "act": u(),
            "limit": limit,
            "mask": np.uint32(mask),
        },
    )
    for t in range(min(tpb, limit)):
        base = t - t % 32
        lanes = [i for i in range(base, min(base + 32, tpb, limit))]
        active = sum(1 << (i - base) for i in lanes)
        on = sum(1 << (i - base) for i in lanes if p[i])
        assert out["act"][t] == active
        assert out["bal"][t] == on & mask
        assert out["anyv"][t] == int((on & mask) != 0)
        assert out["allv"][t] == int((active & mask & ~on) == 0)
