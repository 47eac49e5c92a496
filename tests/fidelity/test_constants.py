"""A wrong output explained by a literal: a changed constant (the CUDA kernel re-run with the
port's literal matches) or eps added in the wrong place (the wrong elements are the ones eps
dominates in the port)."""

from __future__ import annotations

import numpy as np

from cuda2nki.fidelity import constants

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
