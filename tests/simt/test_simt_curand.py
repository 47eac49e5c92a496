"""cuRAND's device API in the interpreter: states, generators, conversions, and the refusal to port."""

from __future__ import annotations

import numpy as np
import pytest
from simt_helpers import fault, run

from cuda2nki.binding import binding_from_dict
from cuda2nki.frontend import parse_source
from cuda2nki.lift import lift_kernel
from cuda2nki.simt import curand_gen as G

M32 = 0xFFFFFFFF


def _xorwow_by_steps(seed: int, offset: int, draws: int) -> list[int]:
    """XORWOW from the salted seed, stepped one draw at a time (no skip-ahead tables)."""
    t0 = (1099087573 * ((seed & M32) ^ 0xAAD26B49)) & M32
    t1 = (2591861531 * ((seed >> 32) ^ 0xF7DCEFDD)) & M32
    d = (6615241 + t1 + t0) & M32
    v = [(123456789 + t0) & M32, 362436069 ^ t0, (521288629 + t1) & M32, 88675123 ^ t1]
    v.append((5783321 + t0) & M32)
    out = []
    for _ in range(offset + draws):
        t = v[0] ^ (v[0] >> 2)
        v = v[1:] + [(v[4] ^ (v[4] << 4) ^ t ^ (t << 1)) & M32]
        d = (d + 362437) & M32
        out.append((v[4] + d) & M32)
    return out[offset:]


XORWOW_SRC = """
#include <curand_kernel.h>
__global__ void setup(STATE *state, unsigned long long seed, int offset) {
    int id = threadIdx.x + blockIdx.x * blockDim.x;
    curand_init(seed, 0, offset + id, &state[id]);
}
__global__ void draw(STATE *states, unsigned int *raw, float *u, int n) {
    int id = threadIdx.x + blockIdx.x * blockDim.x;
    STATE local = states[id];
    for (int k = 0; k < n; k++) raw[id * n + k] = curand(&local);
    u[id] = curand_uniform(&local);
    states[id] = local;
}
"""


@pytest.mark.parametrize("spelling", ["curandState", "curandState_t", "curandStateXORWOW_t"])
def test_xorwow_matches_direct_stepping(spelling: str) -> None:
    src = XORWOW_SRC.replace("STATE", spelling)
    n, draws, seed = 8, 3, 0x1234_5678_9ABC
    st = run(src, "setup", block=(n,), state=np.zeros(n * 12, np.uint32), seed=seed, offset=5)
    got = run(
        src,
        "draw",
        block=(n,),
        states=st["state"],
        raw=np.zeros(n * draws, np.uint32),
        u=np.zeros(n, np.float32),
        n=draws,
    )
    for tid in range(n):
        ref = _xorwow_by_steps(seed, 5 + tid, draws + 1)
        assert got["raw"][tid * draws : (tid + 1) * draws].tolist() == ref[:draws]
        want = np.float32(ref[draws]) * np.float32(2.0**-32) + np.float32(2.0**-33)
        assert got["u"][tid] == want


def test_xorwow_subsequences_are_skip_aheads() -> None:
    """``curand_init(s, k, o)`` equals ``curand_init(s, 0, o)`` then ``skipahead_sequence(k)``,
    and a skip of ``a`` then ``b`` subsequences equals one of ``a + b``."""
    src = """
#include <curand_kernel.h>
__device__ unsigned int first(curandState *s) { return curand(s); }
__global__ void k(unsigned int *a, unsigned int *b, unsigned int *c) {
    int i = threadIdx.x;
    curandState s1, s2, s3;
    curand_init(99, i, 7, &s1);
    curand_init(99, 0, 7, &s2);
    skipahead_sequence((unsigned long long)i, &s2);
    curand_init(99, 0, 0, &s3);
    skipahead_sequence(1ULL, &s3);
    skipahead_sequence((unsigned long long)(i - 1), &s3);
    skipahead(7ULL, &s3);
    a[i] = first(&s1); b[i] = first(&s2); c[i] = first(&s3);
}
"""
    z = np.zeros(16, np.uint32)
    got = run(src, "k", block=(16,), a=z, b=z.copy(), c=z.copy())
    assert got["a"].tolist() == got["b"].tolist()
    assert got["a"][1:].tolist() == got["c"][1:].tolist()
    assert len(set(got["a"].tolist())) == 16  # the subsequences differ


def test_philox_first_block_is_the_known_answer() -> None:
    """Seed 0 at position 0 is Philox4x32-10 of a zero counter and key (Random123's test vector);
    ``curand`` hands the block out word by word, ``curand4`` at once."""
    src = """
#include <curand_kernel.h>
__global__ void k(unsigned int *w, uint4 *q, float4 *u) {
    curandStatePhilox4_32_10_t s;
    curand_init(0ULL, 0ULL, 0ULL, &s);
    for (int j = 0; j < 4; j++) w[j] = curand(&s);
    curandStatePhilox4_32_10_t t;
    curand_init(0, 0, 0, &t);
    q[0] = curand4(&t);
    u[0] = curand_uniform4(&t);
}
"""
    got = run(
        src,
        "k",
        block=(1,),
        w=np.zeros(4, np.uint32),
        q=np.zeros(4, np.uint32),
        u=np.zeros(4, np.float32),
    )
    kat = [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert got["w"].tolist() == kat
    assert got["q"].tolist() == kat
    assert np.all((got["u"] > 0) & (got["u"] <= 1))


def test_philox_offsets_and_subsequences() -> None:
    src = """
#include <curand_kernel.h>
__global__ void k(unsigned int *a, unsigned int *b, unsigned long long seed) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    curandStatePhilox4_32_10 s;
    curand_init(seed, 3, i, &s);
    a[i] = curand(&s);
    curandStatePhilox4_32_10 t;
    curand_init(seed, 3, 0, &t);
    for (int j = 0; j < i; j++) curand(&t);
    b[i] = curand(&t);
}
"""
    z = np.zeros(11, np.uint32)
    got = run(src, "k", block=(11,), a=z, b=z.copy(), seed=2**40 + 17)
    assert got["a"].tolist() == got["b"].tolist()
    ctr = [np.uint32(x) for x in (0, 0, 3, 0)]
    key = [np.uint32(17), np.uint32(256)]
    assert got["a"][:4].tolist() == [int(x) for x in G.philox4x32_10(ctr, key)]


def test_normal_pairs_keep_the_second_value() -> None:
    src = """
#include <curand_kernel.h>
__global__ void k(unsigned int *raw, float *z, int n) {
    int id = threadIdx.x;
    curandState a, b;
    curand_init(42, id, 0, &a);
    curand_init(42, id, 0, &b);
    raw[2 * id] = curand(&b);
    raw[2 * id + 1] = curand(&b);
    for (int j = 0; j < n; j++) z[id * n + j] = curand_normal(&a);
}
"""
    n = 3
    got = run(src, "k", block=(4,), raw=np.zeros(8, np.uint32), z=np.zeros(4 * n, np.float32), n=n)
    for i in range(4):
        x, y = (float(v) for v in got["raw"][2 * i : 2 * i + 2])
        u = (x + 0.5) * 2.0**-32
        v = (y + 0.5) * 2.0**-32 * 2 * np.pi
        r = np.sqrt(-2.0 * np.log(u))
        zs = got["z"][i * n : i * n + 2]
        np.testing.assert_allclose(zs, [r * np.sin(v), r * np.cos(v)], rtol=2e-5, atol=2e-6)
    # the third value starts a new pair: it is not the second one again
    assert got["z"][2] != got["z"][1]


def test_sobol32_is_the_gray_code_sequence() -> None:
    """With direction vectors ``1 << (31 - k)`` Sobol32 is van der Corput in Gray-code order."""
    src = """
#include <curand_kernel.h>
__global__ void k(curandDirectionVectors32_t *dirs, float *u, unsigned int *x, int n) {
    int id = threadIdx.x;
    curandStateSobol32_t s;
    curand_init(dirs[0], id * n, &s);
    for (int j = 0; j < n; j++) x[id * n + j] = curand(&s);
    u[id] = curand_uniform(&s);
}
"""
    dirs = np.array([1 << (31 - k) for k in range(32)], np.uint32)
    n = 5
    got = run(
        src,
        "k",
        block=(4,),
        dirs=dirs,
        u=np.zeros(4, np.float32),
        x=np.zeros(4 * n, np.uint32),
        n=n,
    )
    for i in range(4 * n):
        g = i ^ (i >> 1)
        want = int(f"{g:032b}"[::-1], 2)
        assert int(got["x"][i]) == want


def test_a_state_of_another_type_is_refused() -> None:
    src = """
#include <curand_kernel.h>
__global__ void k(unsigned int *out) {
    uint4 s = make_uint4(1, 2, 3, 4);
    out[0] = curand((curandState *)&s);
}
"""
    d = fault(src, "k", block=(1,), out=np.zeros(1, np.uint32))
    assert d.code.startswith("C2N15")


RNG_KERNELS = [
    """
#include <curand_kernel.h>
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    curandState s;
    curand_init(1234, i, 0, &s);
    if (i < n) y[i] = x[i] * curand_uniform(&s);
}""",
    """
#include <curand_kernel.h>
__device__ float noise(curandStatePhilox4_32_10_t *st) { return curand_normal(st); }
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    curandStatePhilox4_32_10_t st;
    curand_init(7ULL, (unsigned long long)i, 0ULL, &st);
    if (i < n) y[i] = x[i] + noise(&st);
}""",
]

_B = {
    "kernel": "k",
    "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
    "params": {
        "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "y": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 100,
    },
}


@pytest.mark.parametrize("src", RNG_KERNELS)
def test_random_kernels_are_refused_naming_the_generator(src: str) -> None:
    res = lift_kernel(parse_source(src, "r.cu"), "k", binding_from_dict(_B))
    assert not res.claimed
    (d,) = [d for d in res.diagnostics if d.code == "C2N2010"]
    assert "cuRAND call 'curand_" in d.message and "random stream" in d.message
    assert d.loc.line > 1


def test_double_normals_and_sobol_normals() -> None:
    src = """
#include <curand_kernel.h>
__global__ void k(unsigned int *raw, double *z, curandDirectionVectors32_t *dirs,
                  unsigned int *sx, float *sz) {
    int id = threadIdx.x;
    curandStateXORWOW_t a, b;
    curand_init(5, id, 0, &a);
    curand_init(5, id, 0, &b);
    for (int j = 0; j < 4; j++) raw[4 * id + j] = curand(&b);
    z[2 * id] = curand_normal_double(&a);
    z[2 * id + 1] = curand_normal_double(&a);
    curandStateSobol32 s, t;
    curand_init(dirs[0], id, &s);
    curand_init(dirs[0], id, &t);
    sx[id] = curand(&s);
    sz[id] = curand_normal(&t);
}
"""
    dirs = np.array([(0x9E3779B9 * (k + 1)) & M32 | (1 << (31 - k)) for k in range(32)], np.uint32)
    got = run(
        src,
        "k",
        block=(4,),
        raw=np.zeros(16, np.uint32),
        z=np.zeros(8),
        dirs=dirs,
        sx=np.zeros(4, np.uint32),
        sz=np.zeros(4, np.float32),
    )
    from statistics import NormalDist

    for i in range(4):
        x0, x1, y0, y1 = (int(v) for v in got["raw"][4 * i : 4 * i + 4])
        u = ((x0 ^ (x1 << 21)) & (2**64 - 1)) * 2.0**-53 + 2.0**-54
        v = ((y0 ^ (y1 << 21)) & (2**64 - 1)) * 2.0**-52 + 2.0**-53
        r = np.sqrt(-2.0 * np.log(u))
        want = [r * np.sin(np.pi * v), r * np.cos(np.pi * v)]
        np.testing.assert_allclose(got["z"][2 * i : 2 * i + 2], want, rtol=1e-12, atol=1e-12)
        p = (int(got["sx"][i]) + 0.5) * 2.0**-32
        np.testing.assert_allclose(got["sz"][i], NormalDist().inv_cdf(p), rtol=1e-4, atol=1e-4)


def test_state_sizes_are_the_library_layouts() -> None:
    src = """
#include <curand_kernel.h>
__global__ void k(unsigned long long *out) {
    out[0] = sizeof(curandState);
    out[1] = sizeof(curandStatePhilox4_32_10_t);
    out[2] = sizeof(curandStateSobol32_t);
    out[3] = sizeof(curandDirectionVectors32_t);
}
"""
    got = run(src, "k", block=(1,), out=np.zeros(4, np.uint64))
    assert got["out"].tolist() == [48, 64, 140, 128]
