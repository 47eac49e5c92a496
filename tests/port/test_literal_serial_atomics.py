"""Atomics applied thread by thread in literal ports (:mod:`cuda2nki.lift.literal.serialatomic`):
max/min/and/or/xor/exchange/compare-and-swap/increment/decrement whose old value is used, any of
them at addresses read from data, and float running totals, in several spellings (affine and
data addresses, shared and global elements, guards, early returns, a bounded probing loop, 2-D
blocks, scoped spellings, unsigned patterns above 2**31).  Ports match the SIMT interpreter bit
for bit on both targets; 64-bit and 16-bit elements stay refused by name."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import check_literal
from tests.port.test_literal import _kernel, _matches

_HEAD = "__global__ void k(const int* key, int* table, int* out, int n) {\n"
_PARAMS = (
    'key = {{ shape = ["n"], dtype = "int32", role = "in", range = [{lo}, {hi}] }}\n'
    'table = {{ shape = [64], dtype = "{tt}", role = "{role}", range = [{tlo}, {thi}] }}\n'
    'out = {{ shape = ["n"], dtype = "int32", role = "out" }}\n'
    "n = 96"
)

KERNELS = {
    # the winner of a race for each slot: atomicMax's old value at an affine address
    "max_old_value_affine": ("""
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int before = atomicMax(&table[i % 8], key[i]);
    out[i] = before < key[i] ? 1 : before;
}""", dict(lo=-1000, hi=1000)),
    # a minimum per bin chosen by data, the old value unused (a histogram of minima)
    "min_at_data_bins_unused": ("""
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int bin = key[i] & 63;
        atomicMin(&table[bin], key[i] * 3 - 700);
        out[i] = bin;
    }
}""", dict(lo=0, hi=5000)),
    # an open-addressing insert: compare-and-swap in a bounded probing loop with a break
    "cas_linear_probing_insert": ("""
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = key[i] + 1;
    int slot = (k * 7) & 63;
    int where = -1;
    for (int probe = 0; probe < 64; ++probe) {
        int prev = atomicCAS(&table[slot], 0, k);
        if (prev == 0 || prev == k) { where = slot; break; }
        slot = (slot + 1) & 63;
    }
    out[i] = where;
}""", dict(lo=0, hi=90, role="out")),
    # a linked-list push: each thread receives the previous head of its bucket
    "exchange_list_push": ("""
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && key[i] % 3 != 0) {
        int prev = atomicExch(&table[key[i] & 15], i);
        out[i] = prev;
    }
}""", dict(lo=0, hi=500, tlo=-1, thi=0)),
    # tickets that wrap (atomicInc) and a countdown (atomicDec) on unsigned elements
    "inc_dec_unsigned_wrap": ("""
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned t = atomicInc(&table[0], 6u);
    unsigned d = atomicDec(&table[1 + (key[i] & 3)], 5u);
    out[i] = (int)(t * 10u + d);
}""", dict(lo=0, hi=100, tt="uint32", tlo=0, thi=9,
                                 head=_HEAD.replace("int* table", "unsigned* table"))),
    # bit sets: or/xor/and at data words, the old value tells whether the bit was set first
    "bitset_first_setter": ("""
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int word = (key[i] >> 5) & 31, bit = key[i] & 31;
    int before = atomicOr(&table[word], 1 << bit);
    atomicXor_block(&table[32 + (i & 31)], key[i]);
    int masked = atomicAnd(&table[63], ~(1 << (i & 31)));
    out[i] = ((before >> bit) & 1) + 2 * (masked & 1);
}""", dict(lo=0, hi=1023, tlo=-2000000000, thi=2000000000, role="inout")),
    # unsigned maxima above 2**31 (compared as unsigned) in a 2-D block, a __shared__ best
    "unsigned_max_two_dim_shared": ("""
    __shared__ unsigned best;
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int i = blockIdx.x * blockDim.x * blockDim.y + t;
    if (t == 0) best = 0u;
    __syncthreads();
    unsigned v = i < n ? (unsigned)key[i] * 2654435761u : 0u;
    unsigned old = atomicMax(&best, v);
    __syncthreads();
    if (i < n) out[i] = (int)(old ^ best);
}""", dict(lo=0, hi=100000)),
    # one leader per block takes a wrapping ticket (a mask known at trace time: the other
    # threads are skipped), the tickets ordered by block
    "leader_ticket_known_mask": ("""
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        unsigned ticket = atomicInc(&table[0], 2u);
        atomicMax(&table[1 + blockIdx.x % 4], ticket * 10u + blockIdx.x);
        if (i < n) out[i] = (int)ticket;
    }
}""", dict(lo=0, hi=5, tlo=0, thi=3, tt="uint32",
           head=_HEAD.replace("int* table", "unsigned* table"))),
}  # fmt: skip

_BLOCKS = {"unsigned_max_two_dim_shared": ('"ceil_div(n, 64)"', "16, 4")}


def _write(tmp_path, name: str):
    body, opts = KERNELS[name]
    spec = {"lo": 0, "hi": 10, "tt": "int32", "role": "inout", "tlo": -50, "thi": 50, **opts}
    grid, block = _BLOCKS.get(name, ('"ceil_div(n, 64)"', "64"))
    head = spec.pop("head", _HEAD)
    return _kernel(tmp_path, head + body, "k", grid, block, _PARAMS.format(**spec),
                   ["n = 33"])  # fmt: skip


@pytest.mark.parametrize("name", list(KERNELS))
def test_serial_atomics_match_the_interpreter(tmp_path, name):
    _matches(_write(tmp_path, name), tmp_path)


def test_threads_known_inactive_are_skipped(tmp_path):
    """A leader's atomic under a condition known at trace time visits only the leader."""
    from cuda2nki.binding import load_binding
    from cuda2nki.pipeline import port_file

    cu = _write(tmp_path, "leader_ticket_known_mask")
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), lowering="literal")
    assert res.source is not None
    calls = [
        ln for ln in res.source.splitlines() if "_c2n_atomic_serial(" in ln and "def " not in ln
    ]
    assert len(calls) == 1 and "known=" in calls[0], calls


def test_float_running_total_keeps_the_order_of_its_roundings(tmp_path):
    src = """
__global__ void k(const float* x, float* acc, float* before, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) before[i] = atomicAdd(&acc[i % 3], x[i] * 1e-3f) + atomicSub(&acc[3], x[i]);
}"""
    params = (
        'x = { shape = ["n"], dtype = "float32", role = "in", range = [-1e4, 1e4] }\n'
        'acc = { shape = [4], dtype = "float32", role = "inout", range = [-1, 1] }\n'
        'before = { shape = ["n"], dtype = "float32", role = "out" }\n'
        "n = 80"
    )
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 32)"', "32", params, ["n = 45"])
    for target in ("nki", "legacy"):
        out = check_literal(cu, tmp_path, lowering="literal", target=target)
        assert out.status == "match", (target, out.status, out.detail)


@pytest.mark.parametrize(
    ("ct", "dtype", "call"),
    [
        ("unsigned long long", "uint64", "atomicCAS(&w[i & 3], 0ull, 1ull)"),
        ("unsigned short", "uint16", "atomicCAS(&w[1], (unsigned short)0, (unsigned short)i)"),
    ],
)
def test_other_element_types_stay_refused(tmp_path, ct, dtype, call):
    src = (
        f"__global__ void k({ct}* w, int* out, int n) {{\n    int i = threadIdx.x;\n"
        f"    if (i < n) out[i] = (int){call};\n}}\n"
    )
    params = (
        f'w = {{ shape = [4], dtype = "{dtype}", role = "inout", range = [0, 3] }}\n'
        'out = { shape = ["n"], dtype = "int32", role = "out" }\nn = 64'
    )
    cu = _kernel(tmp_path, src, "k", '"1"', "64", params)
    out = check_literal(cu, tmp_path, lowering="literal")
    assert out.status == "refused", out
    assert f"atomicCAS on {dtype} elements" in out.detail, out.detail
