"""A wrong output explained by a literal: a changed constant (the CUDA kernel re-run with the
port's literal matches) or eps added in the wrong place (the wrong elements are the ones eps
dominates in the port)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cuda2nki.fidelity import constants, constexpr

CUDA = """// GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#define K0 0.7978845608f
__global__ void gelu(float* out, const float* inp, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  /* 0.5f in a comment */
    if (i < n) { float x = inp[i]; out[i] = 0.5f * x * (1.0f + tanhf(K0 * (x + .044715f * x * x * x))); }
}
"""


def _gelu(x: np.ndarray, k0: float, k1: float) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(k0 * (x + k1 * x**3)))


def _rerun_from_text(x: np.ndarray):
    """A stand-in for the SIMT re-run: evaluates the GELU with the literals the text holds."""

    def rerun(text: str) -> np.ndarray:
        lits = [lit.value for lit in constants.cuda_literals(text)]
        k0, k1 = lits[0], lits[3]  # the #define, then 0.5f, 1.0f, the coefficient
        return _gelu(x, k0, k1)

    return rerun


def test_cuda_literals_skip_comments_and_keep_lines() -> None:
    lits = constants.cuda_literals(CUDA)
    assert [lit.text for lit in lits] == ["0.7978845608f", "0.5f", "1.0f", ".044715f"]
    assert lits[0].line == 2 and lits[-1].line == 5


def test_replaced_rewrites_every_spelling_of_the_value_only() -> None:
    text = constants.replaced(CUDA, 0.044715, 0.04715)
    assert "0.04715f * x * x * x" in text and "0.044715 x^3" in text  # the comment is kept
    assert constants.replaced("a = 1e-5f + 1.0e-5 + 10e-5;", 1e-5, 0.0) == "a = 0.0f + 0.0 + 10e-5;"


def test_port_replaced_changes_code_not_docstrings() -> None:
    port = '"""eps 1e-5"""\nEPS = 1e-5\ndef k(x):\n    return x * 1e-5 + 2.0\n'
    out = constants.port_replaced(port, 1e-5, 1e-3)
    assert out == '"""eps 1e-5"""\nEPS = 0.001\ndef k(x):\n    return x * 0.001 + 2.0\n'


def test_swaps_pair_close_values_missing_on_the_other_side() -> None:
    port = constants.port_literals("A = 0.5\nB = 1.0\nC = 0.7978845608\nD = 0.04715\nE = -0.04\n")
    pairs = constants.swaps(constants.cuda_literals(CUDA), port)
    assert [(c.text, p.text) for c, p in pairs] == [(".044715f", "0.04715")]


def test_changed_constant_found_in_either_literal() -> None:
    x = np.linspace(-4, 4, 257)
    bound = np.full(x.shape, 1e-6)
    for k0, k1, text, line in [
        (0.7978845608, 0.04715, "0.04715", 3),  # the cubic coefficient
        (0.7788, 0.044715, "0.7788", 2),  # sqrt(2/pi) mistyped
    ]:
        port = f'"""port"""\nK0 = {k0}\ny = {k1}\n'
        got = _gelu(x, k0, k1)
        x_ = constants.changed_constant(got, bound, CUDA, port, _rerun_from_text(x))
        assert x_ is not None and x_.name == "changed constant"
        assert x_.line == line and text in x_.evidence


def test_no_changed_constant_when_the_literal_is_not_the_difference() -> None:
    x = np.linspace(-4, 4, 257)
    got = _gelu(x, 0.7978845608, 0.04715) + 1e-3  # a further, unrelated error
    port = "K0 = 0.7978845608\nK1 = 0.04715\n"
    bound = np.full(x.shape, 1e-6)
    assert constants.changed_constant(got, bound, CUDA, port, _rerun_from_text(x)) is None


LN_CUDA = "__global__ void k(float* o, float eps) {\n    o[0] = rsqrtf(v + 1e-5f) + eps;\n}\n"
LN_PORT = """def k(x, eps2=1e-6):
    eps = 1e-5
    nisa.memset(dst=eps_t, value=float(eps))
    nisa.activation(dst=sd, op=nl.sqrt, data=var)
    nisa.tensor_tensor(dst=sd, data1=sd, data2=eps_t, op=nl.add)
    nisa.reciprocal(dst=rs, data=sd)
    nisa.tensor_scalar(dst=y, data=x, op0=nl.multiply, operand0=eps2)
"""


def test_eps_candidates_literals_and_scalars() -> None:
    cands = constants.eps_candidates(LN_CUDA, LN_PORT, {"eps": ("eps2", 1e-6)})
    assert [(c.text, c.cuda_line) for c in cands] == [("1e-5f", 2), ("eps", 2)]
    assert cands[0].port_lines == frozenset({2}) and cands[1].port_param == "eps2"


def _rows(var: np.ndarray, eps: float, outside: bool) -> np.ndarray:
    return 1.0 / (np.sqrt(var) + eps) if outside else 1.0 / np.sqrt(var + eps)


def test_eps_misplaced_names_the_line_that_adds_it() -> None:
    var = np.array([1.0, 2.0, 0.0, 1e-6, 3.0])
    expected = _rows(var, 1e-5, outside=False)
    got = _rows(var, 1e-5, outside=True)
    bound = 1e-4 * np.abs(expected) + 1e-5
    bad = np.abs(got - expected) > bound
    assert bad.tolist() == [False, False, True, True, False]
    cands = constants.eps_candidates(LN_CUDA, LN_PORT)
    chain = ((7, "reciprocal"), (5, "tensor_tensor"), (3, "memset"))

    def rerun_port(eps: constants.Eps, value: float) -> np.ndarray:
        return _rows(var, value, outside=True)

    x_ = constants.eps_misplaced(got, bad, bound, LN_CUDA, LN_PORT, chain, cands, rerun_port)
    assert x_ is not None and x_.name == "eps misplaced" and x_.line == 5
    assert "CUDA line 2" in x_.evidence

    def insensitive(eps: constants.Eps, value: float) -> np.ndarray:
        return got  # the port's wrong elements do not move with eps: another cause

    assert (
        constants.eps_misplaced(got, bad, bound, LN_CUDA, LN_PORT, chain, cands, insensitive)
        is None
    )


EXPR_CUDA = """#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)
__global__ void k(float* o, const float* x, int D, float s) {
    float a = 1.0f / sqrtf((float)D);  /* 2.0f / 3.0f in a comment */
    float b = x[0] / 2.0f * 3.0f;
    float c = x[0] - 1.0f + 2.0f;
    int n = D / 2 + 1;
    o[n * 2] = a + (float)M_SQRT1_2 + b + c;
}
"""


def test_cuda_constant_exprs_fold_whole_expressions_only() -> None:
    found = {e.text: e.value for e in constexpr.cuda_constant_exprs(EXPR_CUDA, {"D": 64})}
    assert found == pytest.approx(
        {
            "sqrtf(2.0f / M_PI)": math.sqrt(2 / math.pi),
            "1.0f / sqrtf((float)D)": 0.125,
            "(float)M_SQRT1_2": math.sqrt(0.5),
        }
    )
    # D unknown: its expression is not a constant; integer arithmetic is never one
    assert "1.0f / sqrtf((float)D)" not in {
        e.text for e in constexpr.cuda_constant_exprs(EXPR_CUDA)
    }


def test_port_constant_exprs() -> None:
    port = "import math\nK = math.sqrt(2.0 / math.pi)\ndef f(x, n):\n    y = x * (2 / math.pi) + n / 2\n"
    got = [(round(v, 6), line, text) for v, line, text, _ in constexpr.port_constant_exprs(port)]
    assert got == [(0.797885, 2, "math.sqrt(2.0 / math.pi)"), (0.63662, 4, "2 / math.pi")]


def test_rewritten_replaces_an_expression_span() -> None:
    lit = next(c for c in constants.cuda_constants(EXPR_CUDA) if c.span is not None)
    out = constants.rewritten(EXPR_CUDA, lit, 0.6366)
    assert out.splitlines()[0] == "#define GELU_SCALING_FACTOR (0.6366f)"


def _gelu_from_text(x: np.ndarray, scalars: dict[str, float] | None = None):
    """A stand-in for the SIMT re-run: GELU with the scaling factor the text's macro holds."""

    def rerun(text: str) -> np.ndarray:
        line = next(ln for ln in text.splitlines() if "GELU_SCALING_FACTOR" in ln)
        body = line.split("GELU_SCALING_FACTOR", 1)[1].strip()
        k0 = constexpr.cuda_constant_exprs(f"float k = {body};")
        val = k0[0].value if k0 else float(body.strip("()f"))
        return _gelu(x, val, 0.044715)

    return rerun


@pytest.mark.parametrize(
    ("port_line", "value"),
    [
        ("SCALE = 2.0 / math.pi", 2 / math.pi),  # the square root forgotten
        ("SCALE = math.sqrt(2.0 * math.pi)", math.sqrt(2 * math.pi)),  # sqrt(2 pi)
        ("SCALE = 0.7788", 0.7788),  # a literal for the expression
    ],
)
def test_changed_constant_written_as_an_expression(port_line: str, value: float) -> None:
    cuda = EXPR_CUDA.replace("int D, float s", "int D")
    x = np.linspace(-4, 4, 257)
    port = f'"""port"""\nimport math\n{port_line}\n'
    got = _gelu(x, value, 0.044715)
    x_ = constants.changed_constant(
        got, np.full(x.shape, 1e-6), cuda, port, _gelu_from_text(x), {"D": 64}
    )
    assert x_ is not None and x_.name == "changed constant" and x_.line == 3
    assert "sqrtf(2.0f / M_PI) = 0.7978846" in x_.evidence


def test_hard_coded_scale_against_a_computed_one() -> None:
    """The port's 0.125 stands for 1/sqrt(D): right at D = 64, a changed constant at D = 160."""
    cuda = "__global__ void k(float* o, const float* x, int D) {\n    o[0] = x[0] * (1.0f / sqrtf((float)D));\n}\n"
    x = np.linspace(-4, 4, 65)

    def rerun(text: str) -> np.ndarray:
        body = text.splitlines()[1].split("x[0] *", 1)[1].strip(" ;")
        e = constexpr.cuda_constant_exprs(f"float k = {body};", {"D": 160})
        return x * (e[0].value if e else float(body.strip("()f")))

    port = "def k(x):\n    return x * 0.125\n"
    got = x * 0.125
    x_ = constants.changed_constant(got, np.full(x.shape, 1e-6), cuda, port, rerun, {"D": 160})
    assert x_ is not None and x_.line == 2 and "(1.0f / sqrtf((float)D)) = 0.0790569" in x_.evidence
    same = constants.changed_constant(got, np.full(x.shape, 1e-6), cuda, port, rerun, {"D": 64})
    assert same is None  # at D = 64 the values agree: nothing to swap


def test_eps_squared_explained_through_the_cuda_kernels_sensitivity() -> None:
    """eps * eps in the port: where a larger eps does not move the port's wrong rows beyond the
    tolerance (1e-8 against the CUDA kernel's 1e-6 is not enough at a loose tolerance), it moves
    the CUDA kernel on exactly the rows the port gets wrong."""
    var = np.array([1.0, 2.0, 0.0, 1e-6, 3.0, 4e-7])
    eps = 1e-6
    expected = 1.0 / np.sqrt(var + eps)
    got = 1.0 / np.sqrt(var + eps * eps)
    bound = 1e-4 * np.abs(expected) + 1e-5
    bad = np.abs(got - expected) > bound
    assert bad.tolist() == [False, False, True, True, False, True]
    port = "def k(x, eps=1e-6):\n    r = nl.rsqrt(nl.add(x, eps * eps))\n"
    cands = constants.eps_candidates("o = rsqrtf(v + eps);\n", port, {"eps": ("eps", eps)})

    def rerun_port(c: constants.Eps, value: float) -> np.ndarray:
        return got  # the port's wrong rows stay where they are

    def rerun_cuda(c: constants.Eps, value: float) -> np.ndarray:
        return 1.0 / np.sqrt(var + value)

    chain = ((2, "activation"),)
    args = (got, bad, bound, "o = rsqrtf(v + eps);\n", port, chain, cands, rerun_port)
    assert constants.eps_misplaced(*args) is None  # the port's own re-run is not enough
    x_ = constants.eps_misplaced(*args, rerun_cuda, expected)
    assert x_ is not None and x_.name == "eps misplaced" and x_.line == 2
    assert "in the CUDA kernel" in x_.evidence

    def everywhere(c: constants.Eps, value: float) -> np.ndarray:
        return expected * 2  # moves every element alike: eps tells nothing apart

    assert constants.eps_misplaced(*args, everywhere, expected) is None
