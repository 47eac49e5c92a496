"""A float converted to a gather index truncates toward zero in every port.

``int a = pos[i] - 1; y[i] = x[a];`` converts a float to an integer index: C truncates, while the
engines' copy of a float into the indirect DMA's int32 offsets rounds to nearest.  The recognised
gather used to copy the float straight into the offsets, so a position of 3.7 read element 4
instead of 3 (wrong numbers, passed off as an automatic port)."""

from __future__ import annotations

import pytest

from tests.port.acceptance import assert_ports_exactly, grid_binding, tensor_param

_PARAMS = "float* y, const float* x, const float* pos, int n"

#: (name, kernel body for element i < n, lowest position drawn)
BODIES = [
    ("local_shifted", "int a = pos[i] - 1; y[i] = x[a];", 1),
    ("cast_in_subscript", "y[i] = x[(int)pos[i]];", 0),
    ("scaled_then_cast", "int a = (int)(pos[i] * 0.5f); y[i] = 2.0f * x[a];", 0),
    ("guarded_by_predicate", "if (x[i] != 0.f) { int a = pos[i]; y[i] = x[a]; }", 0),
]


def _kernel(body: str) -> str:
    return (
        f"__global__ void k({_PARAMS}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) {{ {body} }}\n"
        "}\n"
    )


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body", "lo"), BODIES, ids=[b[0] for b in BODIES])
def test_a_float_index_truncates(name: str, body: str, lo: int, target: str, tmp_path) -> None:
    role = "inout" if "if (x" in body else "out"
    bind = grid_binding(
        ["ceil_div(n, 128)"],
        {
            "y": tensor_param(["n"], role),
            "x": tensor_param(["n"], "in"),
            # fractional positions: 3.7 must read element 3, not 4
            "pos": tensor_param(["n"], "in", rng=[lo, f"n - 1 + {lo}"]),
            "n": 300,
        },
        [{"n": 300}, {"n": 77}],
    )
    assert_ports_exactly(f"gather/{name}", _kernel(body), bind, target, tmp_path)


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_the_corpus_split_matches_through_a_recogniser(target: str, tmp_path) -> None:
    from cuda2nki.pipeline import port_file
    from tests.port.acceptance import CORPUS, check_kernel

    cu = CORPUS / "gather/split_by_position.cu"
    res = port_file(cu, target=target)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    out = check_kernel(cu, target, tmp_path)
    assert out.status == "match", out
    assert len(out.shapes) >= 3


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_a_negative_float_index_truncates_toward_zero(target: str, tmp_path) -> None:
    # -2.9 converts to -2 (not floor's -3): x[-2 + 3] = x[1]
    bind = grid_binding(
        ["ceil_div(n, 128)"],
        {
            "y": tensor_param(["n"], "out"),
            "x": tensor_param(["n"], "in"),
            "pos": tensor_param(["n"], "in", rng=[-2.9, "n - 4"]),
            "n": 300,
        },
        [{"n": 300}, {"n": 77}],
    )
    src = _kernel("int a = pos[i]; y[i] = x[a + 3];")
    assert_ports_exactly("gather/negative", src, bind, target, tmp_path, literal_ok=True)
