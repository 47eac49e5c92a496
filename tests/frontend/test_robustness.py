"""The front end never raises on garbage: it always answers with diagnostics."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source

SNIPPETS = [
    "__global__ void k(float* p, int n) {",
    "}",
    "{",
    "(",
    ")",
    "[",
    "]",
    ";",
    "<<<",
    ">>>",
    "for (int i = 0; i < n; ++i)",
    "if (n > 0)",
    "else",
    "p[i] = ",
    "threadIdx.x",
    "blockIdx.y",
    "__shared__ float s[32];",
    "#define X 3\n",
    "#ifdef X\n",
    "#endif\n",
    '#include "nope.h"\n',
    "template <int B>",
    "k<4><<<1, 1>>>(p, n);",
    "x",
    "1.0f",
    "+",
    "*",
    "?",
    ":",
    "=",
    ",",
    "__syncthreads();",
    "atomicAdd(p, 1.0f);",
    "goto l;",
    'asm("");',
    "return;",
    "switch (n)",
    "case 1:",
    "\n",
    "/*",
    "*/",
    "//",
    '"',
    "'",
    "\\",
    "#",
    "@",
    "\x00",
]

_settings = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def _check(tu: A.TranslationUnit) -> None:
    assert isinstance(tu, A.TranslationUnit)
    for d in tu.diagnostics:
        assert d.code.startswith("C2N1") and d.loc.line >= 0  # never C2N0005 (internal error)
    for name, ds in tu.rejected.items():
        assert ds and name


@_settings
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data):
    _check(parse_source(data.decode("utf-8", "replace"), "fuzz.cu"))


@_settings
@given(st.lists(st.sampled_from(SNIPPETS), max_size=40).map(" ".join))
def test_random_token_soup_never_raises(text):
    _check(parse_source(text, "soup.cu"))


def test_deep_nesting_is_a_diagnostic_not_a_crash():
    expr = "(" * 3000 + "1" + ")" * 3000
    src = "__global__ void k(int* p) { p[0] = " + expr + "; }\n"
    tu = parse_source(src + "__global__ void ok(int* p) { p[0] = 1; }\n", "deep.cu")
    _check(tu)
    assert [d.code for d in tu.rejected["k"]] == ["C2N1010"]
    assert [f.name for f in tu.kernels] == ["ok"]


def test_threads_each_get_their_own_parser():
    from concurrent.futures import ThreadPoolExecutor

    srcs = [f"__global__ void k{i}(float* p) {{ p[{i}] = {i}.0f; }}\n" for i in range(40)]
    with ThreadPoolExecutor(4) as ex:
        tus = list(ex.map(lambda s: parse_source(s, "t.cu"), srcs))
    assert [tu.kernels[0].name for tu in tus] == [f"k{i}" for i in range(40)]


def test_host_shift_by_a_negative_count_has_no_value(parse) -> None:
    # undefined in C: the host evaluator gives up on the value instead of failing the file
    tu = parse(
        "__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n"
        "int main() {\n    int s = -1;\n    int n = 1 << s;\n    float* p;\n"
        "    k<<<n, 32>>>(p);\n    return 0;\n}\n"
    )
    assert not [d for d in tu.diagnostics if d.code == "C2N0005"], tu.diagnostics
    assert [k.name for k in tu.kernels] == ["k"]
