"""Static constant members of configuration ("traits") structs: ``S::kThreads`` directly, through
a class template instance, a typedef, or a template parameter the struct is given as."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki import api
from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel

STRUCTS = """
struct Narrow { static constexpr int kThreads = 64; static constexpr int kItems = 2;
                static constexpr float kGain = 0.5f; };
template <int T_, int I_> struct Wide {
    static constexpr int kThreads = T_;
    static constexpr int kItems = I_;
    static const int kSpan = kThreads * kItems;   // an earlier member, by its plain name
    static constexpr float kGain = 3.0f;
};
using Big = Wide<128, 4>;
typedef Wide<32, 3> Small;
"""

KERNEL = """
template <typename Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) gain_items(const float* in, float* out, int n) {
    constexpr int per = Cfg::kItems;
    int base = (blockIdx.x * Cfg::kThreads + threadIdx.x) * per;
    for (int j = 0; j < per; ++j)
        if (base + j < n) out[base + j] = Cfg::kGain * in[base + j];
}
"""

# the launch's template argument -> (threads, items, gain)
LAUNCHES = {
    "Narrow": (64, 2, 0.5),
    "Big": (128, 4, 3.0),
    "Small": (32, 3, 3.0),
    "Wide<16, 5>": (16, 5, 3.0),
}


def _source(arg: str) -> str:
    return (
        STRUCTS
        + KERNEL
        + "int main() {\n    float *a, *b; int n = 1000;\n"
        + f"    gain_items<{arg}><<<(n + 511) / 512, 128>>>(a, b, n);\n}}\n"
    )


@pytest.mark.parametrize("arg", sorted(LAUNCHES))
def test_a_template_parameter_bound_to_a_traits_struct(arg: str) -> None:
    threads, items, gain = LAUNCHES[arg]
    tu = parse_source(_source(arg), "gain.cu")
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    n, blocks = 700, -(-700 // (threads * items))
    x = np.linspace(-1, 1, n, dtype=np.float32)
    got = run_kernel(
        tu,
        k.name,
        grid=(blocks,),
        block=(threads,),
        args={"in": x, "out": np.zeros_like(x), "n": n},
    )["out"]
    np.testing.assert_array_equal(got, np.float32(gain) * x)


def test_each_launch_instantiates_its_own_traits() -> None:
    src = (
        STRUCTS
        + KERNEL
        + (
            "int main() {\n    float *a, *b; int n = 1000;\n"
            "    gain_items<Narrow><<<(n + 127) / 128, Narrow::kThreads>>>(a, b, n);\n"
            "    gain_items<Big><<<(n + Big::kSpan - 1) / Big::kSpan, Big::kThreads>>>(a, b, n);\n}\n"
        )
    )
    tu = parse_source(src, "gain.cu")
    assert sorted(k.name for k in tu.kernels) == ["gain_items<Narrow>", "gain_items<Wide<128, 4>>"]


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ("Narrow::kThreads", 64),
        ("Wide<8, 3>::kSpan", 24),
        ("Big::kSpan + Small::kItems", 515),
        ("Wide<Narrow::kItems, 7>::kSpan", 14),
        ("(int)(Narrow::kGain * 10)", 5),
    ],
)
def test_traits_constants_in_a_plain_kernel(expr: str, want: int) -> None:
    src = STRUCTS + f"__global__ void put(int* out) {{ out[threadIdx.x] = {expr}; }}\n"
    tu = parse_source(src, "put.cu")
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(tu, "put", grid=(1,), block=(4,), args={"out": np.zeros(4, np.int32)})["out"]
    assert list(got) == [want] * 4


def test_a_struct_with_data_members_is_no_template_tag() -> None:
    src = (
        "struct Params { int n; static constexpr int kThreads = 32; };\n"
        "template <typename P> __global__ void k(float* o) { o[threadIdx.x] = P::kThreads; }\n"
        "int main() { float* o; k<Params><<<1, 32>>>(o); }\n"
    )
    tu = parse_source(src, "k.cu")
    assert "k" in tu.rejected


def test_a_traits_kernel_ports_and_checks(tmp_path: Path) -> None:
    cu = tmp_path / "gain.cu"
    cu.write_text(
        STRUCTS
        + KERNEL
        + "int main() {\n    float *a, *b; int n = 1000;\n"
        + "    gain_items<Big><<<(n + Big::kSpan - 1) / Big::kSpan, Big::kThreads>>>(a, b, n);\n}\n"
    )
    port = tmp_path / "gain_port.py"
    port.write_text(api.port(cu).source)
    report = api.check(cu, port, seeds=1)
    assert report.verdict == "pass", [d.message for d in report.findings]


def test_a_data_struct_template_keeps_its_own_constants() -> None:
    """``Box<float>::size`` (a struct template with data, given a type) is not a traits tag,
    and reading it leaves no diagnostic behind; ``Tag<2>::k`` beside it is one."""
    src = (
        "template <int T_> struct Tag { static constexpr int k = T_; };\n"
        "template <typename T> struct Box { static constexpr int size = 16 / sizeof(T); T v[size]; };\n"
        "__global__ void put(int* out) { out[threadIdx.x] = Box<float>::size + Tag<2>::k; }\n"
    )
    tu = parse_source(src, "put.cu")
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(tu, "put", grid=(1,), block=(2,), args={"out": np.zeros(2, np.int32)})["out"]
    assert list(got) == [6, 6]
