"""Pointers that move -- an alias re-pointed to another buffer, parameters moved to the block's
tile, operand pointers bumped once per K-tile, an alias indexed with data (an element gather) --
port through a recogniser with the numbers of the CUDA kernel on both targets.  The rewrite that
makes them fixed pointers (:mod:`cuda2nki.frontend.pointers`) keeps the kernel's meaning: the
SIMT interpreter gives the same outputs before and after it, on every spelling here, including
the ones it must leave as written."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_file
from cuda2nki.frontend.pointers import fix_pointers, fix_unit
from cuda2nki.frontend.visit import walk
from cuda2nki.simt.runner import run_kernel
from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

#: corpus kernel -> recognised (True) or a correct literal port (False)
FORMS = {
    "pointers/rows_repoint_inout": True,  # p = a + row*C; ...; p = b + row*C
    "pointers/residual_param_offsets": True,  # inp += ..., res = res + ..., out += (size_t)..
    "pointers/row_mean_late_alias": True,  # const float* x; x = inp + b*D;
    "pointers/sgemm_bump_tiles": True,  # for (t = 0; t < K; t += TILE) { ...; A += TILE; }
    "pointers/sgemm_bump_kcount": True,  # for (kt = 0; ...; kt++) { ...; pa += BK; pb += BK*N; }
    "pointers/gemv_bump_row": True,  # pa++; px += 1; per column
    "pointers/nll_row_alias": True,  # probs_row[targets[i]]: an element gather
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_corpus_moved_pointers_match(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == ("match" if FORMS[rel] else "literal"), out
    assert len(out.shapes) >= 3


_HEAD = "__global__ void k(const float* x, float* y, int n, int m) {\n"

#: (spelling, body, the rewrite leaves every pointer assignment in place)
SPELLINGS = {
    "bump_in_loop": (
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    const float* p = x + i * m;\n"
        "    float s = 0.0f;\n"
        "    for (int j = 0; j < m; j += 2) { s += p[0]; p += 2; }\n"
        "    y[i] = s;\n",
        False,
    ),
    "bump_first_then_read": (
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    const float* p = x + i * m;\n"
        "    float s = 0.0f;\n"
        "    for (int j = 1; j < m; ++j) { p += 1; s += p[0] * j; }\n"
        "    y[i] = s;\n",
        False,
    ),
    "read_after_loop": (  # the pointer is read after its loop: left as written
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    const float* p = x + i * m;\n"
        "    float s = 0.0f;\n"
        "    for (int j = 0; j + 1 < m; ++j) { s += p[0]; p++; }\n"
        "    y[i] = s + p[0];\n",
        True,
    ),
    "conditional_bump": (  # moved under a condition: left as written
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    const float* p = x + i * m;\n"
        "    float s = 0.0f;\n"
        "    for (int j = 0; j < m; ++j) { s += p[0]; if (j % 2 == 0) p += 1; }\n"
        "    y[i] = s;\n",
        True,
    ),
    "param_moved": (
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    x += blockIdx.x * 3;\n"
        "    y = y + i;\n"
        "    if (i < n) y[0] = x[threadIdx.x % 5];\n",
        False,
    ),
    "repoint_twice": (
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    const float* p = x + i * m;\n"
        "    float a = p[0];\n"
        "    p = x + (n - 1 - i) * m;\n"
        "    float b = p[m - 1];\n"
        "    p = x;\n"
        "    y[i] = a - b + p[i % m];\n",
        False,
    ),
}


def _unit(tmp_path, body: str):
    cu = tmp_path / "k.cu"
    cu.write_text(_HEAD + body + "}\n")
    return parse_file(cu)


def _moves(fn: A.Function) -> int:
    return sum(
        1
        for n in walk(fn.body)
        if isinstance(n, A.Assign)
        and isinstance(n.target, A.Name)
        and isinstance(n.target.ty, A.PointerType)
        or isinstance(n, A.Unary)
        and n.op.endswith("++")
        and isinstance(n.operand.ty, A.PointerType)
    )


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_fixed_pointers_keep_the_meaning(name, tmp_path) -> None:
    body, kept = SPELLINGS[name]
    tu = _unit(tmp_path, body)
    fixed = fix_pointers(tu.function("k"))
    assert (_moves(fixed) > 0) == kept, name
    n, m = 37, 6
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n * m).astype(np.float32)
    outs = []
    for unit in (tu, fix_unit(tu, "k")):
        args = {"x": x.copy(), "y": np.zeros(n, np.float32), "n": n, "m": m}
        outs.append(run_kernel(unit, "k", grid=(2, 1, 1), block=(32, 1, 1), args=args)["y"])
    np.testing.assert_array_equal(outs[0], outs[1])
