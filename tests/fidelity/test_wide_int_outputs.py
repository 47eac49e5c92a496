"""64-bit integer buffers in ``check``: the port takes and returns them as uint32 limbs (a
trailing dimension of 2, cuda2nki.limbs), which is no dtype or shape mismatch, and its outputs
are compared with the CUDA kernel's exactly: a wrong lowest bit of a value near 2**64, which
float64 cannot resolve, is a mismatch."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuda2nki import api, limbs

MIXER = """\
__global__ void scramble(const unsigned long long* seeds, unsigned long long* out, int count)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) {
        unsigned long long h = seeds[t] ^ ((unsigned long long)t << 33);
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        out[t] = h * 0xc4ceb9fe1a85ec53ULL;
    }
}
int main()
{
    int count = 700;
    unsigned long long *s, *o;
    cudaMalloc(&s, count * sizeof(unsigned long long));
    cudaMalloc(&o, count * sizeof(unsigned long long));
    scramble<<<(count + 127) / 128, 128>>>(s, o, count);
}
"""

SIGNED = """\
__global__ void spread(const long long* v, long long* w, const int len)
{
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j >= len) return;
    long long d = v[j] - (long long)j * 1000000007LL;
    w[j] = d < 0 ? -(d << 20) : (d >> 3);
}
int main()
{
    int len = 500;
    long long *a, *b;
    cudaMalloc(&a, len * sizeof(long long));
    cudaMalloc(&b, len * sizeof(long long));
    spread<<<(len + 63) / 64, 64>>>(a, b, len);
}
"""


def _ported(tmp_path: Path, src: str, name: str) -> tuple[Path, Path, str]:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    res = api.port(cu, kernel=name)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    assert "nl.uint32" in res.source
    py = tmp_path / f"{name}_port.py"
    py.write_text(res.source)
    return cu, py, res.source


def test_a_port_of_a_uint64_kernel_is_checked_exactly(tmp_path: Path) -> None:
    cu, py, source = _ported(tmp_path, MIXER, "scramble")
    report = api.check(cu, py, seeds=1)
    assert not {"C2N4021", "C2N4010"} & {f.code for f in report.findings}
    assert report.numerics_outcome == "pass"
    # the lowest bit of every output flipped: invisible to a float64 comparison
    head = source.index("def _c2n_wstore(")
    split = source.index("    lo, hi = _c2n_wide(value)\n", head)
    flip = "    lo = nl.bitwise_xor(lo, 1, dtype=nl.int32)\n"
    cut = source.index("\n", split) + 1
    bad = source[:cut] + flip + source[cut:]
    py.write_text(bad)
    assert api.check(cu, py, seeds=1).numerics_outcome == "fail"


def test_a_port_of_an_int64_kernel_passes(tmp_path: Path) -> None:
    cu, py, _ = _ported(tmp_path, SIGNED, "spread")
    report = api.check(cu, py, seeds=1)
    assert report.numerics_outcome == "pass"


def test_limbs_round_trip_and_expose_low_bits() -> None:
    u = np.array([0, 1, 2**32, 2**64 - 1, 2**63 + 5], dtype=np.uint64)
    s = np.array([-1, -(2**63), 2**63 - 1, 7], dtype=np.int64)
    for a in (u, s):
        packed = limbs.to_limbs(a)
        assert packed.dtype == np.uint32 and packed.shape == a.shape + (2,)
        assert np.array_equal(limbs.from_limbs(packed, a.dtype), a)
    assert limbs.to_limbs(u)[3].tolist() == [2**32 - 1, 2**32 - 1]
    near = u.copy()
    near[3] -= 1  # differs in the lowest bit only
    assert np.all(limbs.as_float_exactly(u, near)[3] != near.astype(np.float64)[3])
    assert np.array_equal(limbs.as_float_exactly(u, u), u.astype(np.float64))


def test_a_lowest_bit_wrong_in_a_large_word_is_a_mismatch() -> None:
    from cuda2nki.fidelity.compare import compare

    want = np.array([2**64 - 4094, 2**63 + 2, 12345], dtype=np.uint64)
    got = want ^ np.uint64(1)  # equal as float64 for the two large words
    assert np.array_equal(got[:2].astype(np.float64), want[:2].astype(np.float64))
    c = compare("w", got, want, 0.0)
    assert c.classification == "defect" and c.mismatches == 3
    assert compare("w", want, want.copy(), 0.0).mismatches == 0
