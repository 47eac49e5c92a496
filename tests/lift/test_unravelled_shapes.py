"""A tensor walked by a flat index that the kernel takes apart into coordinates (``/`` and ``%``
by products of sizes) to address another tensor is bound with the N-D shape of that mixed radix,
so that the kernel reads as the layout change it is (see :mod:`cuda2nki.lift.unravel`)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.affine import DivAtom, ModAtom, Poly, sym
from cuda2nki.lift.infer import infer_binding
from cuda2nki.lift.unravel import Digit, digit_of, radix_shape

#: digits by a chain of products, written back permuted; the flat tensor is read
CHAIN = """
__global__ void to_heads(const float* x, float* y, int B, int T, int H, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * T * H * D) {
        int d = i % D;
        int h = (i / D) % H;
        int t = (i / (D * H)) % T;
        int b = i / (D * H * T);
        y[((b * H + h) * T + t) * D + d] = x[i];
    }
}
void run(const float* x, float* y, int B, int T, int H, int D) {
    to_heads<<<(B * T * H * D + 255) / 256, 256>>>(x, y, B, T, H, D);
}
"""

#: the remainder taken apart again (``r = r % ...``), an early return, the flat tensor written
REMAINDER = """
__global__ void from_heads(const float* src, float* dst, int nb, int nt, int nh, int hd) {
    int g = threadIdx.x + blockDim.x * blockIdx.x;
    if (g >= nb * nh * nt * hd) return;
    int b = g / (nh * nt * hd);
    int r = g % (nh * nt * hd);
    int h = r / (nt * hd);
    r = r % (nt * hd);
    int t = r / hd;
    int e = r % hd;
    dst[g] = src[b * nt * nh * hd + t * nh * hd + h * hd + e];
}
void run(const float* src, float* dst, int nb, int nt, int nh, int hd) {
    int total = nb * nh * nt * hd;
    from_heads<<<(total + 127) / 128, 128>>>(src, dst, nb, nt, nh, hd);
}
"""

#: a grid-stride loop over a 2-D transpose
STRIDED = """
__global__ void flip(const float* a, float* at, int R, int C) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < R * C; k += blockDim.x * gridDim.x) {
        int r = k / C;
        int c = k % C;
        at[c * R + r] = a[k];
    }
}
void run(const float* a, float* at, int R, int C) { flip<<<64, 128>>>(a, at, R, C); }
"""

#: three outputs split from one fused (B, T, 3, H, D) input, as attention's q, k, v are
FUSED = """
__global__ void split3(float* q, float* k, float* v, const float* qkv, int B, int T, int H, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * H * T * D) {
        int e = i % D;
        int t = (i / D) % T;
        int h = (i / (D * T)) % H;
        int b = i / (D * T * H);
        int base = ((b * T + t) * 3 * H + h) * D + e;
        q[i] = qkv[base];
        k[i] = qkv[base + H * D];
        v[i] = qkv[base + 2 * H * D];
    }
}
void run(float* q, float* k, float* v, const float* qkv, int B, int T, int H, int D) {
    split3<<<(B * H * T * D + 63) / 64, 64>>>(q, k, v, qkv, B, T, H, D);
}
"""

CASES = {
    "chain": (CHAIN, "to_heads", {"x": ["B", "T", "H", "D"], "y": ["B", "H", "T", "D"]}),
    "remainder": (
        REMAINDER,
        "from_heads",
        {"dst": ["nb", "nh", "nt", "hd"], "src": ["nb", "nt", "nh", "hd"]},
    ),
    "grid-stride": (STRIDED, "flip", {"a": ["R", "C"], "at": ["C", "R"]}),
    "fused": (
        FUSED,
        "split3",
        {n: ["B", "H", "T", "D"] for n in ("q", "k", "v")} | {"qkv": ["B", "T", "3*H", "D"]},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_flat_tensor_takes_the_radix_its_index_is_taken_apart_in(name: str) -> None:
    src, kernel, want = CASES[name]
    partial, _ = infer_binding(parse_source(src, f"{name}.cu"), kernel)
    got = {p: partial["params"][p]["shape"] for p in want}
    assert got == want


#: digits used alone (a row scale, a column bias) are no layout change: the tensors stay flat;
#: the second spelling transposes with the same digits
ALONE = """
__global__ void rowscale(const float* x, const float* s, const float* b, float* y, int R, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < R * C) y[%s] = x[i] * s[i / C] + b[i %% C];
}
void run(const float* x, const float* s, const float* b, float* y, int R, int C) {
    rowscale<<<(R * C + 255) / 256, 256>>>(x, s, b, y, R, C);
}
"""

#: the digits put back in their own order are the same flat walk; swapped, a permutation
IN_ORDER = """
__global__ void copy3(const float* x, float* y, int A, int Bn, int Cn) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < A * Bn * Cn) {
        int c = i %% Cn, b = (i / Cn) %% Bn, a = i / (Cn * Bn);
        y[%s] = 2.0f * x[i];
    }
}
void run(const float* x, float* y, int A, int Bn, int Cn) {
    copy3<<<(A * Bn * Cn + 255) / 256, 256>>>(x, y, A, Bn, Cn);
}
"""

#: a radix whose places do not reach the guard's bound (``n``, no product of the digits)
SHORT = """
__global__ void part(const float* x, float* y, int n, int C, int R) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < %s) y[(i %% C) * R + i / C] = x[i];
}
void run(const float* x, float* y, int n, int C, int R) {
    part<<<(n + 255) / 256, 256>>>(x, y, n, C, R);
}
"""

#: (source, kernel, the flat spelling's fill, the permuting spelling's, the read tensor's dims)
PAIRS = {
    "digits-alone": (ALONE, "rowscale", "i", "(i %% C) * R + i / C", ["R", "C"]),
    "in-order": (IN_ORDER, "copy3", "(a * Bn + b) * Cn + c", "(b * A + a) * Cn + c", None),
    "short-radix": (SHORT, "part", "n", "R * C", ["R", "C"]),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_only_a_layout_change_over_the_whole_radix_unflattens(name: str) -> None:
    src, kernel, flat, permuting, dims = PAIRS[name]
    plain, _ = infer_binding(parse_source(src % flat, "k.cu"), kernel)
    assert len(plain["params"]["x"]["shape"]) == 1, plain["params"]["x"]
    moved, _ = infer_binding(parse_source(src % permuting.replace("%%", "%"), "k.cu"), kernel)
    assert moved["params"]["x"]["shape"] == (dims or ["A", "Bn", "Cn"])


def test_digits_normalise_across_spellings() -> None:
    i, D, H = sym("i"), sym("D"), sym("H")
    nested = Poly.atom(ModAtom(Poly.atom(DivAtom(i, D)), H))  # (i / D) % H
    assert digit_of(nested, i) == Digit(D, D * H)
    rem = Poly.atom(DivAtom(Poly.atom(ModAtom(i, D * H * sym("T"))), D))  # (i % DHT) / D
    assert digit_of(rem, i) == Digit(D, D * H * sym("T"))
    odd = Poly.atom(ModAtom(Poly.atom(ModAtom(i, D)), H))  # H need not divide D
    assert digit_of(odd, i) is None


def test_the_places_must_chain_up_to_the_bound() -> None:
    D, H, T = sym("D"), sym("H"), sym("T")
    found = {Digit(Poly.const(1), D), Digit(D, D * H), Digit(D * H, None)}
    assert radix_shape(found, D * H * T) == [T, H, D]
    assert radix_shape(found, sym("n")) is None
    assert radix_shape({Digit(Poly.const(1), D), Digit(H, None)}, D * H) is None


@pytest.mark.parametrize("name", ["remainder", "fused"])
def test_port_and_check_of_an_inferred_permutation_agree(tmp_path, name: str) -> None:
    """No sidecar: the inferred N-D shapes give a transpose port whose numbers match."""
    from cuda2nki import api

    src, kernel, _ = CASES[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    res = api.port(cu, kernel=kernel)
    assert res.source is not None and "transpose" in (res.idiom or "")
    port = tmp_path / f"{name}_port.py"
    port.write_text(res.source)
    report = api.check(cu, port, kernel=kernel, seeds=1)
    assert report.numerics_outcome == "pass", [d.message for d in report.findings]
