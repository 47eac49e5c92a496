"""Generated suppressions: only performance findings, each with its reason, placed before the DMA
it covers, and only where the lowering's construct forces the finding (the tiles of an element
gather hold one element per partition row, whatever the tiling)."""

from __future__ import annotations

import re

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.codegen import suppress
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.portscan import scan
from cuda2nki.pipeline import port_file
from tests.port.acceptance import tensor_param


def test_a_comment_names_its_ids_and_reason_and_the_scanner_reads_it() -> None:
    text = suppress.comment(["C2N5007", "C2N5001", "C2N5007"], "one element\n  per row")
    assert text == "cuda2nki: ignore[C2N5001,C2N5007] one element per row"
    src = f"import nki\n@nki.jit\ndef k(x):\n    # {text}\n    return x\n"
    info, _ = scan("k.py", src)
    assert info.suppressions[4] == frozenset({"C2N5001", "C2N5007"})


@pytest.mark.parametrize("codes", [["C2N4001"], ["C2N4012", "C2N5007"], [], ["*"]])
def test_numerics_and_blanket_suppressions_are_refused(codes) -> None:
    with pytest.raises(ValueError):
        suppress.comment(codes, "no")


#: (name, source, binding): element gathers spelled with other names, index orders and grids
GATHERS = [
    (
        "btv_2d_grid",  # batch rows on grid y, positions on x, the offset summed in another order
        "__global__ void k(float* out, const float* p, const int* lab, int B, int T, int V) {\n"
        "    int b = blockIdx.y;\n"
        "    int s = threadIdx.x + blockIdx.x * blockDim.x;\n"
        "    if (b < B && s < T) {\n"
        "        int c = lab[b * T + s];\n"
        "        out[b * T + s] = 2.0f * p[c + (b * T + s) * V];\n"
        "    }\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(T, 32)", "B"], "block": [32]},
            "params": {
                "out": tensor_param(["B", "T"], "out"),
                "p": tensor_param(["B", "T", "V"], "in"),
                "lab": {"shape": ["B", "T"], "dtype": "int32", "role": "in", "range": [0, "V"]},
                "B": 5,
                "T": 90,
                "V": 21,
            },
            "check": {"shapes": [{"B": 2, "T": 130, "V": 7}]},
        },
    ),
    (
        "flat_rows",  # one thread per row, the row-major address written out
        "__global__ void k(float* y, const float* m, const int* col, int R, int C) {\n"
        "    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (r >= R) return;\n"
        "    y[r] = m[r * C + col[r]] + 1.0f;\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(R, 64)"], "block": [64]},
            "params": {
                "y": tensor_param(["R"], "out"),
                "m": tensor_param(["R", "C"], "in"),
                "col": {"shape": ["R"], "dtype": "int32", "role": "in", "range": [0, "C"]},
                "R": 3000,
                "C": 33,
            },
            "check": {"shapes": [{"R": 129, "C": 5}]},
        },
    ),
]

GATHERS += [
    (
        "float_position_1d",  # a 1-D source at a truncated float position, flagged elements only
        "__global__ void k(float* o, const float* v, const float* keep, const float* at, int m) {\n"
        "    int j = threadIdx.x + blockIdx.x * blockDim.x;\n"
        "    if (j < m) {\n"
        "        if (keep[j] > 0.5f) {\n"
        "            int q = (int)(at[j] - 1.0f);\n"
        "            o[j] = v[q];\n"
        "        }\n"
        "    }\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(m, 256)"], "block": [256]},
            "params": {
                "o": tensor_param(["m"], "inout"),
                "v": tensor_param(["m"], "in"),
                "keep": tensor_param(["m"], "in"),
                "at": {"shape": ["m"], "dtype": "float32", "role": "in", "range": [1, "m + 1"]},
                "m": 700,
            },
            "check": {"shapes": [{"m": 130}]},
        },
    ),
    (
        "int_table_1d",  # a lookup table indexed by an int array, scaled on the way out
        "__global__ void k(const int* idx, const float* table, float* y, int n, int t) {\n"
        "    int i = blockDim.x * blockIdx.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    y[i] = 0.5f * table[idx[i]];\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
            "params": {
                "idx": {"shape": ["n"], "dtype": "int32", "role": "in", "range": [0, "t"]},
                "table": tensor_param(["t"], "in"),
                "y": tensor_param(["n"], "out"),
                "n": 900,
                "t": 50,
            },
            "check": {"shapes": [{"n": 129, "t": 3}]},
        },
    ),
]

#: a flat buffer read at an affine base plus a data-dependent offset (the lifted index is a sum
#: with a data term): an element gather of the buffer's elements
GATHERS += [
    (
        "flat_buffer_2d_domain",  # (b, t) positions of a flat [B * T * V] buffer, base first
        "__global__ void k(float* loss, const float* probs, const int* tgt, int B, int T, int V) {\n"
        "    int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (idx >= B * T) return;\n"
        "    loss[idx] = -logf(probs[idx * V + tgt[idx]]);\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(B * T, 64)"], "block": [64]},
            "params": {
                "loss": tensor_param(["B", "T"], "out"),
                "probs": {
                    "shape": ["B * T * V"],
                    "dtype": "float32",
                    "role": "in",
                    "range": [0.01, 1.0],
                },
                "tgt": {"shape": ["B", "T"], "dtype": "int32", "role": "in", "range": [0, "V"]},
                "B": 3,
                "T": 70,
                "V": 40,
            },
            "check": {"shapes": [{"B": 1, "T": 129, "V": 3}]},
        },
    ),
    (
        "flat_buffer_offset_first",  # one row per thread, the data offset written first
        "__global__ void k(const float* m, const int* col, float* y, int R, int C) {\n"
        "    int r = threadIdx.x + blockIdx.x * blockDim.x;\n"
        "    if (r < R) y[r] = 3.0f * m[col[r] + C * r] - 1.0f;\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(R, 128)"], "block": [128]},
            "params": {
                "m": tensor_param(["R * C"], "in"),
                "col": {"shape": ["R"], "dtype": "int32", "role": "in", "range": [0, "C"]},
                "y": tensor_param(["R"], "out"),
                "R": 500,
                "C": 9,
            },
            "check": {"shapes": [{"R": 130, "C": 1}]},
        },
    ),
]

_IGNORE = re.compile(r"#\s*cuda2nki:\s*ignore\[([A-Z0-9,]+)\]\s*(\S.*)")


@pytest.mark.parametrize(("vid", "src", "bdict"), GATHERS, ids=[g[0] for g in GATHERS])
def test_element_gather_tiles_carry_their_reason_and_check_passes(vid, src, bdict, tmp_path):
    cu = tmp_path / f"{vid}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal
    lines = res.source.splitlines()
    marks = [(i, m) for i, ln in enumerate(lines) if (m := _IGNORE.search(ln))]
    assert marks, res.source
    for i, m in marks:
        assert set(m.group(1).split(",")) <= {"C2N5001", "C2N5007"}
        assert "element gather" in m.group(2)
        assert "dma_copy" in lines[i + 1], lines[i + 1]  # the covered line is the next one
    assert any("vector_" in lines[i + 1] for i, _ in marks)  # the gather itself
    port = tmp_path / f"{vid}.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above


def test_ports_without_an_element_gather_carry_no_suppression(tmp_path) -> None:
    cu = tmp_path / "scale.cu"
    cu.write_text(
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = 3.0f * x[i];\n"
        "}\n"
    )
    bdict = {
        "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
        "params": {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 50},
    }
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **bdict}, path=str(cu)))
    assert res.source is not None and "ignore[" not in res.source


#: (name, source, binding): kernels whose only outputs are one result per row, computed from a
#: row of an input; other names, index orders, guards, loops and block sizes
ROW_RESULTS = [
    (
        "nearest_centre",  # a running argmin over centres, the centre's stride written first
        "__global__ void k(const float* pts, const float* ctr, int* lab, int n, int m, int d) {\n"
        "    int i = threadIdx.x + blockDim.x * blockIdx.x;\n"
        "    if (i < n) {\n"
        "        float best = 3.0e38f;\n"
        "        int arg = 0;\n"
        "        for (int c = 0; c < m; ++c) {\n"
        "            float s = 0.0f;\n"
        "            for (int f = 0; f < d; ++f) {\n"
        "                float e = pts[i * d + f] - ctr[d * c + f];\n"
        "                s += e * e;\n"
        "            }\n"
        "            if (s < best) { best = s; arg = c; }\n"
        "        }\n"
        "        lab[i] = arg;\n"
        "    }\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(n, 256)"], "block": [256]},
            "params": {
                "pts": tensor_param(["n", "d"], "in"),
                "ctr": tensor_param(["m", "d"], "in"),
                "lab": {"shape": ["n"], "dtype": "int32", "role": "out"},
                "n": 1500,
                "m": 4,
                "d": 130,
            },
            "check": {"shapes": [{"n": 130, "m": 3, "d": 5}]},
        },
    ),
    (
        "row_max_grid_stride",  # the largest value of each row, rows walked grid-stride
        "__global__ void k(const float* x, float* mx, int R, int C) {\n"
        "    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < R;"
        " r += blockDim.x * gridDim.x) {\n"
        "        float v = x[r * C];\n"
        "        for (int j = 1; j < C; j++) v = fmaxf(v, x[r * C + j]);\n"
        "        mx[r] = v;\n"
        "    }\n"
        "}\n",
        {
            "launch": {"grid": [8], "block": [128]},
            "params": {
                "x": tensor_param(["R", "C"], "in"),
                "mx": tensor_param(["R"], "out"),
                "R": 2000,
                "C": 100,
            },
            "check": {"shapes": [{"R": 129, "C": 7}]},
        },
    ),
    (
        "row_norm_early_return",  # the Euclidean norm of each row, an early return as the guard
        "__global__ void k(float* nrm, const float* a, int rows, int cols) {\n"
        "    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (r >= rows) return;\n"
        "    float s = 0.0f;\n"
        "    for (int j = 0; j < cols; j += 1) s += a[cols * r + j] * a[cols * r + j];\n"
        "    nrm[r] = sqrtf(s);\n"
        "}\n",
        {
            "launch": {"grid": ["ceil_div(rows, 64)"], "block": [64]},
            "params": {
                "nrm": tensor_param(["rows"], "out"),
                "a": tensor_param(["rows", "cols"], "in"),
                "rows": 3000,
                "cols": 96,
            },
            "check": {"shapes": [{"rows": 200, "cols": 3}]},
        },
    ),
]


@pytest.mark.parametrize(("vid", "src", "bdict"), ROW_RESULTS, ids=[r[0] for r in ROW_RESULTS])
def test_row_result_stores_carry_a_reason_computed_from_the_kernel(vid, src, bdict, tmp_path):
    cu = tmp_path / f"{vid}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal
    lines = res.source.splitlines()
    marks = [(i, m) for i, ln in enumerate(lines) if (m := _IGNORE.search(ln))]
    assert marks, res.source
    out = next(n for n, p in bdict["params"].items() if isinstance(p, dict) and p["role"] == "out")
    src_t = next(
        n for n, p in bdict["params"].items() if isinstance(p, dict) and len(p["shape"]) == 2
    )
    for i, m in marks:
        assert m.group(1) == "C2N5007"
        assert f"'{out}'" in m.group(2) and f"'{src_t}'" in m.group(2), m.group(2)
        assert "one result per row" in m.group(2)
        assert f"dst={out}[" in lines[i + 1], lines[i + 1]  # the covered line: the store
    port = tmp_path / f"{vid}.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above


def test_a_kernel_with_a_wide_output_besides_its_row_results_carries_none(tmp_path) -> None:
    """Rows scaled to unit sum, the sums stored too: the wide store is the kernel's traffic."""
    cu = tmp_path / "unit_rows.cu"
    cu.write_text(
        "__global__ void k(const float* x, float* y, float* tot, int R, int C) {\n"
        "    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (r < R) {\n"
        "        float s = 0.0f;\n"
        "        for (int j = 0; j < C; j++) s += x[r * C + j];\n"
        "        for (int j = 0; j < C; j++) y[r * C + j] = x[r * C + j] / s;\n"
        "        tot[r] = s;\n"
        "    }\n"
        "}\n"
    )
    bdict = {
        "launch": {"grid": ["ceil_div(R, 128)"], "block": [128]},
        "params": {
            "x": tensor_param(["R", "C"], "in"),
            "y": tensor_param(["R", "C"], "out"),
            "tot": tensor_param(["R"], "out"),
            "R": 300,
            "C": 40,
        },
    }
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **bdict}, path=str(cu)))
    assert res.source is not None and not res.literal
    assert "dst=tot[" in res.source and "ignore[" not in res.source
