"""``numeric_limits<K>`` inside a template kernel that is not instantiated yet (its launch sits
in a host template nothing calls): an opaque value of type ``K`` that keeps the kernel, and the
limit of the type once ``K`` is known."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find

_PAD_IN_HOST_TEMPLATE = """\
#include <limits>
template <class K, class V>
__global__ void pad(K* key, V* val, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    K r;
    r = (i < n) ? key[i] : std::numeric_limits<K>::max();
    if (i < 2 * n) key[i] = r;
}
template <class K, class V>
void run(K* k, V* v, int n) { pad<<<(n + 127) / 128, 128>>>(k, v, n); }
"""

_LOWEST_WITH_USING = """\
#include <limits>
using namespace std;
template <typename Key, int BS>
__global__ void seed(Key* best, int n) {
    for (int i = blockIdx.x * BS + threadIdx.x; i < n; i += gridDim.x * BS)
        best[i] = numeric_limits<Key>::lowest();
}
template <typename Key>
void go(Key* b, int n) { seed<Key, 256><<<8, 256>>>(b, n); }
"""

_IN_A_DEVICE_TEMPLATE = """\
#include <limits>
template <typename T>
__device__ T sentinel(int i, int n, const T* a) {
    return i < n ? a[i] : -std::numeric_limits<T>::infinity();
}
template <typename T>
__global__ void fill(T* out, const T* a, int n) {
    int t = threadIdx.x;
    out[t] = sentinel<T>(t, n, a);
}
template <typename T>
void launch(T* o, const T* a, int n) { fill<T><<<1, 64>>>(o, a, n); }
"""


@pytest.mark.parametrize(
    ("src", "kernel"),
    [
        (_PAD_IN_HOST_TEMPLATE, "pad"),
        (_LOWEST_WITH_USING, "seed"),
        (_IN_A_DEVICE_TEMPLATE, "fill"),
    ],
)
def test_kernel_with_a_limit_of_a_parameter_is_kept_uninstantiated(parse, src, kernel):
    tu = parse(src)
    assert kernel not in tu.rejected, tu.diagnostics
    k = next(k for k in tu.kernels if k.name == kernel)
    assert k.template_params and not k.template_args


def test_limit_of_a_parameter_instantiated_by_value(parse):
    tu = parse(_PAD_IN_HOST_TEMPLATE, templates={"K": "unsigned short", "V": "int"})
    assert tu.rejected == {}, tu.diagnostics
    assert 65535 in [x.value for x in find(tu.kernels[0], A.IntLit)]


def test_limit_of_a_record_parameter_still_refused(parse):
    tu = parse("""\
#include <limits>
struct Pair { int a; int b; };
template <typename T>
__global__ void k(int* out) { out[threadIdx.x] = std::numeric_limits<T>::max().a; }
template <typename T>
void run(int* o) { k<T><<<1, 32>>>(o); }
void go(int* o) { run<Pair>(o); }
""")
    assert "k" in tu.rejected
