"""A branch on a thread index that stores a different value in each arm (a boundary row, column or
cell set to a broadcast value, the interior updated by a difference) ports with the numbers of
the CUDA kernel on both targets: each arm's value lands only where its arm ran, whatever the
spelling (if/else, ternary, a local assigned in both arms, the interior arm first, separate ifs).
Where a form is not recognised, the literal lowering ports it -- never a port with other
numbers."""

from __future__ import annotations

import pytest

from tests.port.acceptance import CORPUS, check_kernel, port_variant, tensor_param

TARGETS = ["nki", "legacy"]

#: corpus kernels of this form, and whether a recogniser claims them
CORPUS_FORMS = {
    "stencil/fdtd_field_row0": True,  # if (i == 0) ey[i][j] = fict[t]; else ey -= ...
    "stencil/boundary_last_row": True,  # a local assigned in both arms; the last row pinned
    "stencil/inflow_1d": True,  # 1-D ternary on the thread index
    "stencil/fdtd_field_col0": True,  # col > 0 arm first; a flat offset at - 1 (a flat view)
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(CORPUS_FORMS))
def test_corpus_branch_stores_match(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=4)
    assert out.status == ("match" if CORPUS_FORMS[rel] else "literal"), out
    assert len(out.shapes) >= 4


_HEAD = """__global__ void k(float* {e}, const float* {h}, const float* {f}, float c, int t,
                  int NX, int NY) {{
    int {j} = blockIdx.x * blockDim.x + threadIdx.x;
    int {i} = blockIdx.y * blockDim.y + threadIdx.y;
"""


def _grid2(body: str, **names: str) -> str:
    n = {"e": "e", "h": "h", "f": "f", "i": "i", "j": "j", **names}
    return _HEAD.format(**n) + body.format(**n) + "}\n"


def _binding2(e: str = "e", h: str = "h", f: str = "f", block: tuple = (32, 8)) -> dict:
    bx, by = block
    return {
        "launch": {"grid": [f"ceil_div(NY, {bx})", f"ceil_div(NX, {by})"], "block": [bx, by]},
        "params": {
            e: tensor_param(["NX", "NY"], "inout"),
            h: tensor_param(["NX", "NY"], "in"),
            f: tensor_param([10], "in"),
            "c": 0.5,
            "t": 3,
            "NX": 64,
            "NY": 96,
        },
        "check": {"shapes": [{"NX": 33, "NY": 129}, {"NX": 1, "NY": 50}, {"NX": 130, "NY": 7}]},
    }


#: (id, source, binding, recognised)
VARIANTS = [
    (
        "row0_if_else",
        _grid2(
            "    if ({i} < NX && {j} < NY) {{\n"
            "        if ({i} == 0) {e}[{i} * NY + {j}] = {f}[t];\n"
            "        else {e}[{i} * NY + {j}] = {e}[{i} * NY + {j}]"
            " - c * ({h}[{i} * NY + {j}] - {h}[({i} - 1) * NY + {j}]);\n"
            "    }}\n"
        ),
        _binding2(),
        True,
    ),
    (
        "row0_literal_row_index",  # the then arm names row 0 by a constant
        _grid2(
            "    if ({i} < NX && {j} < NY) {{\n"
            "        if ({i} == 0) {e}[{j}] = {f}[t];\n"
            "        else {e}[{i} * NY + {j}] -= c * ({h}[{i} * NY + {j}] - {h}[({i} - 1) * NY + {j}]);\n"
            "    }}\n",
            e="ey",
            h="hz",
            f="src",
            i="row",
            j="col",
        ),
        _binding2("ey", "hz", "src"),
        True,
    ),
    (
        "last_row",
        _grid2(
            "    if ({i} >= NX || {j} >= NY) return;\n"
            "    if ({i} == NX - 1) {e}[{i} * NY + {j}] = {f}[t];\n"
            "    else {e}[{i} * NY + {j}] = {e}[{i} * NY + {j}]"
            " - c * ({h}[({i} + 1) * NY + {j}] - {h}[{i} * NY + {j}]);\n"
        ),
        _binding2(block=(16, 16)),
        True,
    ),
    (
        "local_both_arms",
        _grid2(
            "    if ({i} < NX && {j} < NY) {{\n"
            "        float v = {e}[{i} * NY + {j}];\n"
            "        if ({i} == 0) v = {f}[t];\n"
            "        else v = v - c * ({h}[{i} * NY + {j}] - {h}[({i} - 1) * NY + {j}]);\n"
            "        {e}[{i} * NY + {j}] = v;\n"
            "    }}\n",
            e="field",
            i="y",
            j="x",
        ),
        _binding2("field"),
        True,
    ),
    (
        "interior_first_then_scaled",  # a later statement reads what either arm stored
        _grid2(
            "    if ({i} < NX && {j} < NY) {{\n"
            "        if ({i} > 0) {{ {e}[{i} * NY + {j}] -= c * ({h}[{i} * NY + {j}]"
            " - {h}[({i} - 1) * NY + {j}]); }}\n"
            "        else {{ {e}[{i} * NY + {j}] = {f}[t]; }}\n"
            "        {e}[{i} * NY + {j}] *= 2.0f;\n"
            "    }}\n"
        ),
        _binding2(block=(64, 2)),
        True,
    ),
    (
        "ternary_row0",
        _grid2(
            "    if ({i} < NX && {j} < NY)\n"
            "        {e}[{i} * NY + {j}] = ({i} == 0) ? {f}[t]"
            " : {e}[{i} * NY + {j}] - c * ({h}[{i} * NY + {j}] - {h}[({i} - 1) * NY + {j}]);\n"
        ),
        _binding2(),
        True,
    ),
    (
        "ternary_last_row",
        _grid2(
            "    if ({i} < NX && {j} < NY)\n"
            "        {e}[{i} * NY + {j}] = {i} == NX - 1 ? {f}[t] + 1.0f"
            " : {e}[{i} * NY + {j}] * c + {h}[({i} + 1) * NY + {j}];\n",
            e="out_e",
            i="r",
            j="q",
        ),
        _binding2("out_e", block=(128, 1)),
        True,
    ),
    (
        "col0_if_else",  # a flat offset at j - 1: literal, with the numbers of the kernel
        _grid2(
            "    if ({i} < NX && {j} < NY) {{\n"
            "        if ({j} == 0) {e}[{i} * NY + {j}] = {f}[t];\n"
            "        else {e}[{i} * NY + {j}] = {e}[{i} * NY + {j}]"
            " - c * ({h}[{i} * NY + {j}] - {h}[{i} * NY + {j} - 1]);\n"
            "    }}\n"
        ),
        _binding2(),
        False,
    ),
    (
        "separate_ifs",  # i == 0, then i != 0, then a third arm over both
        _grid2(
            "    if ({i} < NX && {j} < NY) {{\n"
            "        if ({i} == 0) {e}[{i} * NY + {j}] = {f}[t];\n"
            "        if ({i} != 0) {e}[{i} * NY + {j}] = {e}[{i} * NY + {j}]"
            " - c * ({h}[{i} * NY + {j}] - {h}[({i} - 1) * NY + {j}]);\n"
            "        if ({i} < 2) {e}[{i} * NY + {j}] = {e}[{i} * NY + {j}] + 1.0f;\n"
            "    }}\n"
        ),
        _binding2(),
        False,
    ),
    (
        "cell0_1d",
        """__global__ void k(float* q, const float* flux, const float* inflow, float r, int s,
                  int n) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < n) {
        if (idx == 0) q[idx] = inflow[s];
        else q[idx] = q[idx] - r * (flux[idx] - flux[idx - 1]);
    }
}
""",
        {
            "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
            "params": {
                "q": tensor_param(["n"], "inout"),
                "flux": tensor_param(["n"], "in"),
                "inflow": tensor_param([4], "in"),
                "r": 0.25,
                "s": 1,
                "n": 300,
            },
            "check": {"shapes": [{"n": 1}, {"n": 129}, {"n": 5000}]},
        },
        True,
    ),
    (
        "block_leader_1d",  # the first thread of each block: a residue, not one cell
        """__global__ void k(float* y, const float* x, const float* f, int t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (threadIdx.x == 0) y[i] = f[t];
    else y[i] = y[i] + x[i] - x[i - 1];
}
""",
        {
            "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
            "params": {
                "y": tensor_param(["n"], "inout"),
                "x": tensor_param(["n"], "in"),
                "f": tensor_param([5], "in"),
                "t": 4,
                "n": 1000,
            },
            "check": {"shapes": [{"n": 1}, {"n": 65}, {"n": 333}]},
        },
        False,
    ),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("vid", "src", "bdict", "recognised"), VARIANTS, ids=[v[0] for v in VARIANTS]
)
def test_branch_store_variants_match(vid, src, bdict, recognised, target, tmp_path) -> None:
    res, run, points = port_variant(
        f"branch/{vid}", src, bdict, target, tmp_path, tol=1e-6, literal_ok=not recognised
    )
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    if recognised:
        assert not res.literal
