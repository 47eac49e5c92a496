"""``numeric_limits<T>`` where ``T`` is a template's type parameter or a typedef: the limit of
the type it stands for, as a literal; a name that is no arithmetic type stays unknown."""

from __future__ import annotations

import math

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find

_PAD = """\
#include <limits>
template <class K>
__global__ void pad(K* out, const K* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 2 * n) out[i] = (i < n) ? in[i] : std::numeric_limits<K>::%s();
}
void run(K2* o, const K2* a, int n) { pad<K2><<<(2 * n + 63) / 64, 64>>>(o, a, n); }
"""


@pytest.mark.parametrize(
    ("ctype", "what", "value"),
    [
        ("int", "max", 2**31 - 1),
        ("unsigned int", "max", 2**32 - 1),
        ("short", "lowest", -(2**15)),
        ("unsigned char", "min", 0),
        ("long long", "min", -(2**63)),
    ],
)
def test_limit_of_an_integer_template_parameter(parse, ctype, what, value):
    tu = parse((_PAD % what).replace("K2", ctype))
    assert tu.rejected == {}, tu.diagnostics
    lits = [x.value for x in find(tu.kernels[0], A.IntLit)]
    assert value in lits


@pytest.mark.parametrize(
    ("ctype", "what", "check"),
    [
        ("float", "max", lambda v: abs(v - 3.4028234663852886e38) < 1e30),
        ("double", "infinity", math.isinf),
        ("float", "lowest", lambda v: v < -3e38),
    ],
)
def test_limit_of_a_floating_template_parameter(parse, ctype, what, check):
    tu = parse((_PAD % what).replace("K2", ctype))
    assert tu.rejected == {}, tu.diagnostics
    assert any(check(x.value) for x in find(tu.kernels[0], A.FloatLit))


def test_limit_of_a_typedef_without_the_call_parentheses(parse):
    tu = parse("""\
#include <limits>
typedef unsigned short key16_t;
using score_t = float;
using namespace std;
__global__ void k(key16_t* keys, score_t* best, int n) {
    int t = threadIdx.x;
    if (t < n) {
        keys[t] = numeric_limits<key16_t>::max();
        best[t] = -numeric_limits<score_t>::infinity();
    }
}
""")
    assert tu.rejected == {}, tu.diagnostics
    k = tu.kernels[0]
    assert 65535 in [x.value for x in find(k, A.IntLit)]
    assert any(math.isinf(x.value) for x in find(k, A.FloatLit))


def test_limit_of_a_record_type_parameter_stays_unknown(parse):
    tu = parse("""\
#include <limits>
struct Pair { int a; int b; };
template <typename T>
__global__ void k(int* out) { out[threadIdx.x] = std::numeric_limits<T>::max().a; }
void run(int* o) { k<Pair><<<1, 32>>>(o); }
""")
    assert "k" in tu.rejected
    assert {d.code for d in tu.rejected["k"]} & {"C2N1021", "C2N1020", "C2N1030"}
