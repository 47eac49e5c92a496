"""Compile-time tags in host code: a generic lambda that launches a template kernel with the
value of its ``auto`` parameter (``tag.value``), called with ``std::integral_constant`` /
``std::bool_constant`` tags directly or through a dispatcher, instantiates the kernel with one
admissible value (128 when admissible, else the first written) and says which; a named tag
object (``constexpr std::bool_constant<true> on;``) passed to a tag parameter fixes the kernel's
template argument like ``std::bool_constant<true>{}``."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
#include <type_traits>
template <int BS>
__global__ void twice(float* dst, const float* src, int count) {
    int g = blockIdx.x * BS + threadIdx.x;
    if (g < count) dst[g] = src[g] + src[g];
}
"""

#: spelling -> (host code, BS the kernel is instantiated with)
CASES = {
    "switch_dispatcher_and_constexpr_local": (
        """
template <class F>
void dispatch(F&& f, int bs) {
    switch (bs) {
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    }
}
void run(float* d, const float* s, int count, int block_size) {
    auto go = [&](auto tag) {
        constexpr int block_size = tag.value;
        twice<block_size><<<(count + block_size - 1) / block_size, block_size>>>(d, s, count);
    };
    dispatch(go, block_size);
}
int main() { float *d, *s; run(d, s, 1000, 256); return 0; }
""",
        128,
    ),
    "value_read_in_place_first_admissible": (
        """
template <typename Fn>
void pick(Fn launch, int n) {
    if (n <= 32) launch(std::integral_constant<int, 32>());
    else launch(std::integral_constant<int, 512>());
}
void run(float* d, const float* s, int count) {
    auto body = [=](auto width) {
        twice<width.value><<<(count + width.value - 1) / width.value, width.value>>>(d, s, count);
    };
    pick(body, count);
}
int main() { float *d, *s; run(d, s, 700); return 0; }
""",
        32,
    ),
    "lambda_written_in_the_call": (
        """
template <class F>
void by_size(int n, F&& f) {
    switch (n) {
    case 1: f(std::integral_constant<unsigned, 256u>{}); break;
    default: f(std::integral_constant<unsigned, 64u>{}); break;
    }
}
void run(float* d, const float* s, int count, int mode) {
    by_size(mode, [&](auto threads) {
        const int T = threads.value;
        dim3 block(T);
        dim3 grid((count + T - 1) / T);
        twice<T><<<grid, block>>>(d, s, count);
    });
}
int main() { float *d, *s; run(d, s, 900, 1); return 0; }
""",
        256,
    ),
    "called_directly": (
        """
void run(float* d, const float* s, int count, bool wide) {
    auto go = [&](auto k) {
        constexpr int n = k.value * 2;
        twice<n><<<(count + n - 1) / n, n>>>(d, s, count);
    };
    if (wide) go(std::integral_constant<int, 64>{});
    else go(std::integral_constant<int, 16>{});
}
int main() { float *d, *s; run(d, s, 1000, true); return 0; }
""",
        128,
    ),
    "through_two_dispatchers": (
        """
template <class F>
void inner(F f, int b) {
    if (b == 0) f(std::integral_constant<int, 32>{});
    else f(std::integral_constant<int, 128>{});
}
template <class F>
void outer(F f, int b) { inner(f, b); }
void run(float* d, const float* s, int count, int b) {
    auto go = [&](auto c) {
        constexpr int bs = c.value;
        twice<bs><<<(count + bs - 1) / bs, bs>>>(d, s, count);
    };
    outer(go, b);
}
int main() { float *d, *s; run(d, s, 1000, 1); return 0; }
""",
        128,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_generic_lambda_launch_takes_one_dispatched_tag(case: str) -> None:
    host, bs = CASES[case]
    tu = parse_source(KERNEL + host, "t.cu")
    kernel = tu.kernels[0]
    assert dict(kernel.template_args) == {"BS": bs}
    bnd, diags = binding_from_inference(tu, kernel.name)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert list(bnd.block)[:1] == [bs]
    assert bnd.tensor("dst").role == "out"
    said = [d for d in tu.diagnostics if d.code == "C2N2100" and "template argument" in d.message]
    assert any(f"= {bs} for" in d.message for d in said), [d.message for d in said]
    assert all(d.loc.line == kernel.loc.line for d in said)  # the kernel's note, placed at it


def test_bool_tags_take_the_first_written() -> None:
    src = """
#include <type_traits>
template <bool NEG>
__global__ void sign(float* dst, const float* src, int count) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < count) dst[g] = NEG ? -src[g] : src[g];
}
void run(float* d, const float* s, int count, bool neg) {
    auto go = [&](auto flag) { sign<flag.value><<<(count + 127) / 128, 128>>>(d, s, count); };
    if (neg) go(std::true_type{}); else go(std::bool_constant<false>());
}
"""
    tu = parse_source(src, "t.cu")
    assert dict(tu.kernels[0].template_args) == {"NEG": 1}


def test_a_lambda_no_call_gives_a_tag_leaves_the_template_uninstantiated() -> None:
    host = """
void run(float* d, const float* s, int count, int bs) {
    auto go = [&](auto tag) {
        constexpr int b = tag.value;
        twice<b><<<(count + b - 1) / b, b>>>(d, s, count);
    };
    use(go, bs);
}
"""
    tu = parse_source(KERNEL + host, "t.cu")
    assert not tu.kernels[0].template_args
    assert not [d for d in tu.diagnostics if d.code == "C2N2100"]


NAMED = """
#include <type_traits>
%s
template <typename OutT, bool Acc>
__global__ void store(OutT* dst, const float* src, int count, std::bool_constant<Acc>) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < count) { if constexpr (Acc) dst[g] += (OutT)src[g]; else dst[g] = (OutT)src[g]; }
}
void run(float* d, const float* s, int count) {
    store<<<(count + 127) / 128, 128>>>(d, s, count, %s);
}
"""


@pytest.mark.parametrize(
    ("decl", "arg", "value"),
    [
        ("constexpr std::bool_constant<true> yes;", "yes", 1),
        ("constexpr std::bool_constant<false> no_acc;", "no_acc", 0),
        ("const std::true_type on{};", "on", 1),
        ("static constexpr std::integral_constant<bool, true> acc_on{};", "acc_on", 1),
    ],
)
def test_a_named_tag_object_fixes_the_kernels_tag_parameter(
    decl: str, arg: str, value: int
) -> None:
    tu = parse_source(NAMED % (decl, arg), "t.cu")
    kernel = tu.kernels[0]
    assert dict(kernel.template_args)["Acc"] == value
    bnd, diags = binding_from_inference(tu, kernel.name)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
