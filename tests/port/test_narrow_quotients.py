"""A quotient of unsigned bytes stored back into a byte (``o[i] = (a[i] + b[i]) / 2``, the
average of two images): the sum of two bytes is at most 510, its half at most 255, so the
conversion to ``unsigned char`` cannot wrap and the port computes it exactly through the
recogniser. Bounds that may pass 255 still end in a refusal or an exact port."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, map_kernel, port_variant, tensor_param

_PARAMS = "const unsigned char* a, const unsigned char* b, unsigned char* o, int n"
_BIND = grid_binding(
    ["ceil_div(n, 64)"],
    {
        "a": tensor_param(["n"], "in", "uint8", [0, 255]),
        "b": tensor_param(["n"], "in", "uint8", [0, 255]),
        "o": tensor_param(["n"], "out", "uint8"),
        "n": 1000,
    },
    [{"n": 131}, {"n": 7}, {"n": 2000}],
    block=64,
)

FIT = [
    ("half_of_a_sum", "(a[i] + b[i]) / 2"),
    ("weighted_third", "(unsigned char)((a[i] + 2 * b[i]) / 3)"),
    ("scaled_product", "a[i] * b[i] / 255"),
    ("rounded_half", "(a[i] + b[i] + 1) / 2"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), FIT, ids=[f[0] for f in FIT])
def test_byte_quotients_port_exactly_through_the_recogniser(name, body, target, tmp_path):
    src = map_kernel(body, _PARAMS, "o")
    res, run, points = port_variant(f"u8/{name}", src, _BIND, target, tmp_path)
    assert res.idiom == "map"
    assert len(points) >= 3 and not run.mismatches, run.mismatches


MAY_WRAP = [
    ("half_plus_one", "(a[i] + b[i]) / 2 + 1"),
    ("sum_by_a_byte", "(a[i] + b[i]) / (b[i] + 1)"),
]


@pytest.mark.parametrize(("name", "body"), MAY_WRAP, ids=[m[0] for m in MAY_WRAP])
def test_quotients_that_may_pass_a_byte_are_exact_or_refused(name, body, tmp_path):
    src = map_kernel(body, _PARAMS, "o")
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **_BIND}), target="nki")
    if res.source is None:
        assert any(d.code in ("C2N2301", "C2N2501") for d in res.diagnostics)
        return
    _, run, _ = port_variant(f"narrow/{name}", src, _BIND, "nki", tmp_path, literal_ok=True)
    assert not run.mismatches, run.mismatches
