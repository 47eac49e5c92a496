"""Device functions with several ``return``s (under branches on values known for the block, on
a loop index, inside loops, under per-thread conditions) port literally and match the SIMT
interpreter on both targets, on shapes and scalar values that take every return."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.literal.single_exit import needs_single_exit, single_exit
from tests.port.literal_acceptance import check_literal

_BINDING = """\
kernel = "r"
[launch]
grid = ["ceil_div(n, 32)"]
block = [32]
[params]
n = 64
m = 0
x = {{ shape = ["n"], dtype = "float32", role = "in" }}
y = {{ shape = ["n"], dtype = "float32", role = "out" }}
[check]
rtol = 1e-5
atol = 1e-5
{shapes}
"""

#: (n, m) points: every helper below takes a different return for m = 0, 1, 2 and 5
_POINTS = ((64, 0), (45, 1), (33, 2), (70, 5))

_APPLY = (
    "__global__ void r(const float* x, float* y, int n, int m) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = f(x[i], m);\n}\n"
)

_IN_LOOP = (
    "__global__ void r(const float* x, float* y, int n, int m) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    float acc = 0.0f;\n"
    "    for (int step = 0; step < m + 2; step++) acc += f(x[i], step);\n"
    "    y[i] = acc;\n}\n"
)

HELPERS = {
    # returns under branches on a parameter known for the whole block
    "param_chain": "__device__ float f(float v, int m) {\n    if (m == 0) return v > 0.0f ? v : 0.0f;\n"
    "    if (m == 1) return v * v;\n    return 2.0f * v;\n}\n",
    # both arms return, braces
    "both_arms": "__device__ float f(float v, int m) {\n"
    "    if (m > 1) { return v * m; } else { return -v; }\n}\n",
    # a return inside a loop with a uniform trip count, found on the loop index
    "in_loop": "__device__ float f(float v, int m) {\n    for (int k = 0; k < 4; ++k) {\n"
    "        if (k == m) return v * k;\n    }\n    return v;\n}\n",
    # a while loop whose body updates a running value before returning from it
    "while_running": "__device__ float f(float v, int m) {\n    float s = 0.0f;\n    int k = 0;\n"
    "    while (k < 6) {\n        s += v;\n        if (k >= m) return s;\n        k++;\n    }\n"
    "    return -s;\n}\n",
    # a return in the else arm; the statements after the if run only on the other path
    "else_then_rest": "__device__ float f(float v, int m) {\n    float t = v + 1.0f;\n"
    "    if (m != 2) { t = t * 3.0f; } else return t;\n    t = t - m;\n    return t * 0.5f;\n}\n",
    # nested loops, the return in the inner one
    "nested_loops": "__device__ float f(float v, int m) {\n    float s = v;\n"
    "    for (int a = 0; a < 3; a++)\n        for (int b = 0; b < 3; b++) {\n"
    "            if (a * 3 + b == m + 1) return s;\n            s = s * 0.5f + 1.0f;\n        }\n"
    "    return 0.0f;\n}\n",
    # per-thread returns: the value decides
    # a per-thread return inside a loop with a uniform trip count, the value updated per step
    "per_thread_in_loop": "__device__ float f(float v, int m) {\n"
    "    for (int k = 0; k < m + 2; k++) {\n        if (v < k * 0.3f) return k * v;\n"
    "        v = v - 0.1f;\n    }\n    return -v;\n}\n",
    "per_thread": "__device__ float f(float v, int m) {\n    if (v < 0.0f) return 0.0f;\n"
    "    if (v > 0.5f) return v * m;\n    return v + 1.0f;\n}\n",
}


def _kernel(tmp: Path, src: str) -> Path:
    cu = tmp / "r.cu"
    cu.write_text(src)
    shapes = "".join(f"[[check.shapes]]\nn = {n}\nm = {m}\n" for n, m in _POINTS)
    cu.with_suffix(".toml").write_text(_BINDING.format(shapes=shapes))
    return cu


def _matches(cu: Path, tmp: Path) -> None:
    for target in ("nki", "legacy"):
        out = check_literal(cu, tmp, lowering="literal", target=target, max_points=5)
        assert out.status == "match", (target, out.status, out.detail)
        assert "C2N2300" in out.codes
        assert len(out.points) >= 4


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_device_function_with_several_returns_matches(tmp_path, helper):
    _matches(_kernel(tmp_path, HELPERS[helper] + _APPLY), tmp_path)


@pytest.mark.parametrize("helper", ["param_chain", "in_loop", "per_thread"])
def test_early_return_on_the_callers_loop_index_matches(tmp_path, helper):
    _matches(_kernel(tmp_path, HELPERS[helper] + _IN_LOOP), tmp_path)


def test_void_function_returning_early_skips_its_stores(tmp_path):
    src = (
        "__device__ void put(float* y, int i, float v, int m) {\n"
        "    if (m == 1) return;\n    y[i] = v * 2.0f;\n    if (m > 1) return;\n"
        "    y[i] += 1.0f;\n}\n"
        "__global__ void r(const float* x, float* y, int n, int m) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) { y[i] = -1.0f; put(y, i, x[i], m); }\n}\n"
    )
    _matches(_kernel(tmp_path, src), tmp_path)


def _fn(src: str):
    tu = parse_source(src, "t.cu")
    return next(f for f in tu.functions if f.name == "f")


def test_a_single_tail_return_is_left_as_written():
    fn = _fn("__device__ float f(float v, int m) {\n    float t = v * m;\n    return t;\n}\n")
    assert not needs_single_exit(fn) and single_exit(fn) is fn


def test_the_rewrite_returns_once_and_names_do_not_clash():
    src = HELPERS["in_loop"].replace("float v", "float f_result, float f_done")
    src = src.replace("return v", "return f_result")
    fn = single_exit(_fn(src))
    text = repr(fn.body)
    assert text.count("Return(") == 1
    assert "f_result2" in text and "f_done2" in text


@pytest.mark.parametrize(
    "call, head",
    [
        ("pick<2>(x[i], m)", "template <int K>\n__device__ float pick(float v, int m) {\n"),
        ("pick<float, 3>(x[i], m)",
         "template <typename T, int K>\n__device__ T pick(T v, int m) {\n"),
    ],
)  # fmt: skip
def test_template_instantiation_with_several_returns_matches(tmp_path, call, head):
    """The rewrite's result and flag locals are named after the function; an instantiation's
    name (``pick<2>``) is not a Python name, and the port spells them as one."""
    body = (
        "    if (m == 1) return v * K;\n    if (m > 1) { v += 1.0f; return v - K; }\n"
        "    return v;\n}\n"
    )
    src = head + body + _APPLY.replace("f(x[i], m)", call)
    _matches(_kernel(tmp_path, src), tmp_path)
