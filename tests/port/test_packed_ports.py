"""Packed vector structs (llm.c-style ``Packed128<T>``) port through a recogniser on both targets:
the lane loop over ``size`` is unrolled, each lane is one element, and the lanes of a vector
merge back into one statement (or one reduction) over the flat axis.  The corpus kernels and
generated spellings (typedef or ``using``, lane-loop names, fp32 or bf16 payloads, guards or
none, loads through a reinterpret cast or through a word constructor with ``__ldcs``) all match
the SIMT interpreter, which matches a NumPy reference."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt.runner import run_kernel
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

PACKED = sorted(p.stem for p in (CORPUS / "packed").glob("*.cu"))


def test_the_packed_suite_has_its_spellings() -> None:
    assert len(PACKED) >= 5, PACKED


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", PACKED)
def test_corpus_packed_kernels_port_through_a_recogniser(name, target, tmp_path) -> None:
    out = check_kernel(CORPUS / "packed" / f"{name}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert len(out.shapes) >= 3


@dataclass(frozen=True)
class Spelling:
    alias: str  # "typedef" | "using"
    lane: str  # the lane loop's variable
    elem: str  # "float" | "bf16"
    guard: str  # "none" | "if" | "return"
    load: str  # "cast" (reinterpret the pointer) | "word" (int4 word constructor, __ldcs/__stcs)
    size: str  # "alias" (X::size) | "template" (Packed128<T>::size) | "member" (v.size)

    @property
    def lanes(self) -> int:
        return 4 if self.elem == "float" else 8


SPELLINGS = {
    "typedef_k_fp32_if_cast": Spelling("typedef", "k", "float", "if", "cast", "alias"),
    "using_e_bf16_return_word": Spelling("using", "e", "bf16", "return", "word", "template"),
    "using_lane_fp32_none_word": Spelling("using", "lane", "float", "none", "word", "member"),
    "typedef_ii_bf16_none_cast": Spelling("typedef", "ii", "bf16", "none", "cast", "member"),
    "typedef_q_bf16_if_word": Spelling("typedef", "q", "bf16", "if", "word", "alias"),
}

_STRUCT = """
template <class T>
struct alignas(16) Packed128 {
    Packed128() = default;
    __device__ explicit Packed128(int4 bits) {
        static_assert(sizeof(bits) == sizeof(payload), "size");
        memcpy(&payload, &bits, sizeof(bits));
    }
    __device__ T& operator[](int index) { return payload[index]; }
    __device__ const T& operator[](int index) const { return payload[index]; }
    __device__ int4 get_bits() const {
        int4 bits;
        memcpy(&bits, &payload, sizeof(bits));
        return bits;
    }
    static constexpr const size_t size = sizeof(int4) / sizeof(T);
    T payload[size];
};
"""

_LOADERS = {
    "cast": """
template <class T>
__device__ Packed128<T> ld(const T* p) { return *reinterpret_cast<const Packed128<T>*>(p); }
template <class T>
__device__ void st(T* p, Packed128<T> v) { *reinterpret_cast<Packed128<T>*>(p) = v; }
""",
    "word": """
template <class T>
__device__ Packed128<T> ld(const T* p) {
    return Packed128<T>{__ldcs(reinterpret_cast<const int4*>(p))};
}
template <class T>
__device__ void st(T* p, Packed128<T> v) { __stcs(reinterpret_cast<int4*>(p), v.get_bits()); }
""",
}


def _source(s: Spelling) -> str:
    elem = "float" if s.elem == "float" else "__nv_bfloat16"
    alias = (
        f"typedef Packed128<{elem}> vec_t;"
        if s.alias == "typedef"
        else f"using vec_t = Packed128<{elem}>;"
    )
    size = {"alias": "vec_t::size", "template": f"Packed128<{elem}>::size", "member": "a.size"}[
        s.size
    ]
    read = "a[{l}]" if s.elem == "float" else "(float)a[{l}]"
    write = "{v}" if s.elem == "float" else f"({elem})({{v}})"
    body = (
        f"    vec_t a = ld(x + i);\n"
        f"    vec_t r;\n"
        f"    for (int {s.lane} = 0; {s.lane} < {size}; {s.lane}++) {{\n"
        f"        r[{s.lane}] = {write.format(v=read.format(l=s.lane) + ' * 2.0f + 1.0f')};\n"
        f"    }}\n"
        f"    st(y + i, r);\n"
    )
    head = "    int i = (blockIdx.x * blockDim.x + threadIdx.x) * vec_t::size;\n"
    if s.guard == "if":
        body = (
            head
            + "    if (i < n) {\n"
            + body.replace("\n    ", "\n        ").replace("    vec_t a", "        vec_t a", 1)
            + "    }\n"
        )
    elif s.guard == "return":
        body = head + "    if (i >= n) return;\n" + body
    else:
        body = head + body
    return (
        "#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n#include <string.h>\n"
        + _STRUCT
        + _LOADERS[s.load]
        + alias
        + f"\n\n__global__ void k({elem}* y, const {elem}* x, int n) {{\n"
        + body
        + "}\n"
    )


def _binding(s: Spelling) -> str:
    per_block = 32 * s.lanes
    dtype = "float32" if s.elem == "float" else "bfloat16"
    grid = f"n // {per_block}" if s.guard == "none" else f"ceil_div(n, {per_block})"
    sizes = (
        [per_block * 4, per_block * 9, per_block * 40]
        if s.guard == "none"
        else [per_block * 4, per_block * 9 + s.lanes, per_block * 40 + 3 * s.lanes]
    )
    shapes = "".join(f"\n[[check.shapes]]\nn = {n}\n" for n in sizes[1:])
    return (
        'kernel = "k"\n\n[launch]\n'
        f'grid = ["{grid}"]\nblock = [32]\n\n[params]\n'
        f'y = {{ shape = ["n"], dtype = "{dtype}", role = "out" }}\n'
        f'x = {{ shape = ["n"], dtype = "{dtype}", role = "in" }}\n'
        f"n = {sizes[0]}\n\n[check]\nrtol = 1e-2\natol = 1e-2\n{shapes}"
    )


def _write(tmp_path, name: str, s: Spelling):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_source(s))
    cu.with_suffix(".toml").write_text(_binding(s))
    return cu


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_packed_spellings_run_as_numpy_says(name, tmp_path) -> None:
    s = SPELLINGS[name]
    cu = _write(tmp_path, name, s)
    tu = parse_file(cu)
    assert "k" not in tu.rejected, tu.rejected.get("k")
    n = 32 * s.lanes * 3
    dt = np.float32 if s.elem == "float" else ml_dtypes.bfloat16
    x = np.random.default_rng(2).standard_normal(n).astype(dt)
    got = run_kernel(
        tu, "k", grid=(3, 1, 1), block=(32, 1, 1), args={"x": x, "y": np.zeros(n, dt), "n": n}
    )["y"]
    want = (x.astype(np.float32) * np.float32(2.0) + np.float32(1.0)).astype(dt)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_packed_spellings_port_through_a_recogniser(name, target, tmp_path) -> None:
    cu = _write(tmp_path, name, SPELLINGS[name])
    out = check_kernel(cu, target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == "map", out
