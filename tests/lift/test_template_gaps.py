"""A template kernel left uninstantiated (as the lowering leaves it before arguments are assumed
for it, see :mod:`cuda2nki.frontend.assumedinst`): binding inference names the template
arguments it lacks (a missing item, C2N2101) and the literal refusal says how to supply them;
an instantiated one (by a launch, ``--template`` or defaults) reports nothing of the kind."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.frontend.driver import lower_source
from cuda2nki.lift.infer import infer_binding
from cuda2nki.lift.literal import LiteralRefusal, lower_literal

_BODY = """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2;
}
"""

UNBOUND = [
    ("typename_only", "template <typename T>", "T* out, const T* in, int n", "T"),
    ("int_and_type", "template <int BS, class V>", "V* out, const V* in, int n", "BS, V"),
    ("default_for_one", "template <typename T, int TILE = 32>", "T* out, const T* in, int n", "T"),
    ("unused_size", "template <unsigned W>", "float* out, const float* in, int n", "W"),
]


def _src(head: str, params: str, launch: str = "") -> str:
    return f"{head}\n__global__ void scale({params}) {_BODY}{launch}"


@pytest.mark.parametrize(("name", "head", "params", "names"), UNBOUND, ids=[u[0] for u in UNBOUND])
def test_unbound_template_arguments_are_a_named_missing_item(name, head, params, names) -> None:
    tu = lower_source(_src(head, params), f"{name}.cu")  # as written: nothing assumed
    _, diags = infer_binding(tu, "scale")
    gaps = [d for d in diags if d.code == "C2N2101" and "template argument" in d.message]
    assert len(gaps) == 1, [d.message for d in diags]
    assert f"template argument{'s' if ',' in names else ''} {names} for 'scale'" in gaps[0].message
    assert "--template" in gaps[0].message
    with pytest.raises(LiteralRefusal) as err:
        lower_literal(tu, "scale", None)
    assert f"template arguments {names} unknown" in str(err.value)


BOUND = [
    (
        "launched",
        "template <typename T>",
        "T* out, const T* in, int n",
        "\nvoid run(float* o, const float* x, int n) { scale<float><<<(n + 127) / 128, 128>>>(o, x, n); }\n",
        {},
    ),
    (
        "option",
        "template <int BS, class V>",
        "V* out, const V* in, int n",
        "",
        {"BS": "64", "V": "float"},
    ),
    (
        "defaults",
        "template <typename T = float, int TILE = 32>",
        "T* out, const T* in, int n",
        "",
        {},
    ),
]


@pytest.mark.parametrize(
    ("name", "head", "params", "launch", "targs"), BOUND, ids=[b[0] for b in BOUND]
)
def test_instantiated_templates_report_no_gap(name, head, params, launch, targs) -> None:
    tu = parse_source(_src(head, params, launch), f"{name}.cu", templates=targs)
    _, diags = infer_binding(tu, "scale")
    assert not [d for d in diags if "template argument" in d.message]
