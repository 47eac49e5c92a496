"""C's short-circuit ``&&`` / ``||``: a memory read on the right of an index guard
(``if (i < n && keep[i] > 0.5f)``) happens only where the guard holds.  The SIMT interpreter
evaluates it so, and a port must too: its loads stay inside the tensors (no out-of-bounds
slice over the rounded-up grid) and its numbers match, on both NKI APIs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki import api
from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.ir.printer import to_text
from cuda2nki.lift import shortcirc
from cuda2nki.testing import assert_port_matches

_1D = "out: inout x: in keep: in"


def _params(spec: str, dims: dict[str, list[str]], dtypes: dict[str, str]) -> dict:
    """``"out: inout x: in"`` -> binding params (shape ``[n]`` and float32 unless given)."""
    pairs = spec.split()
    return {
        name.rstrip(":"): {
            "shape": dims.get(name.rstrip(":"), ["n"]),
            "dtype": dtypes.get(name.rstrip(":"), "float32"),
            "role": role,
        }
        for name, role in zip(pairs[::2], pairs[1::2])
    }


# name -> (source, kernel, grid, block, params, sizes)
KERNELS: dict[str, tuple] = {
    "and_block": (
        """
__global__ void masked_scale(float* out, const float* x, const float* keep, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && keep[i] > 0.5f) {
        out[i] = x[i] * 2.0f;
    }
}""",
        "masked_scale",
        ["ceil_div(n, 128)"],
        [128],
        _params(_1D, {}, {}),
        {"n": 700},
    ),
    "truthy_mask_else_if": (
        """
__global__ void keep_copy(float* y, const float* src, const int* mask, int len) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    if (idx < len && mask[idx]) {
        y[idx] = src[idx] + 1.0f;
    } else if (idx < len) {
        y[idx] = 0.0f;
    }
}""",
        "keep_copy",
        ["ceil_div(len, 256)"],
        [256],
        _params(
            "y: out src: in mask: in", {n: ["len"] for n in "y src mask".split()}, {"mask": "int32"}
        ),
        {"len": 1000},
    ),
    "nested_2d": (
        """
__global__ void sparse_scale(float* out, const float* a, const float* w, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if ((r < rows) && (c < cols) && w[r * cols + c] != 0.0f) {
        out[r * cols + c] = a[r * cols + c] * w[r * cols + c] + 1.0f;
    }
}""",
        "sparse_scale",
        ["ceil_div(cols, 16)", "ceil_div(rows, 16)"],
        [16, 16],
        _params("out: inout a: in w: in", {n: ["rows", "cols"] for n in ("out", "a", "w")}, {}),
        {"rows": 100, "cols": 70},
    ),
    "ternary_value": (
        """
__global__ void relu_masked(float* out, const float* x, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (tid < n && x[tid] > 0.0f) ? x[tid] * 3.0f : -1.0f;
    if (tid < n) out[tid] = v;
}""",
        "relu_masked",
        ["ceil_div(n, 512)"],
        [512],
        _params("out: out x: in", {}, {}),
        {"n": 1300},
    ),
    "or_return": (
        """
__global__ void drop_zero(float* out, const float* x, const float* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || m[i] == 0.0f) return;
    out[i] = x[i] * m[i];
}""",
        "drop_zero",
        ["ceil_div(n, 128)"],
        [128],
        _params("out: inout x: in m: in", {}, {}),
        {"n": 700},
    ),
    "or_flag": (
        """
__global__ void skip_copy(float* out, const float* x, const float* m, int n) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    bool skip = gid >= n || m[gid] < 0.0f;
    if (!skip) out[gid] = x[gid] - m[gid];
}""",
        "skip_copy",
        ["ceil_div(n, 128)"],
        [128],
        _params("out: inout x: in m: in", {}, {}),
        {"n": 700},
    ),
    "column_mask": (
        """
__global__ void col_mask(float* y, const float* x, const float* keep, int rows, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (j < m && keep[j] > 0.5f) {
        y[r * m + j] = x[r * m + j] * keep[j];
    }
}""",
        "col_mask",
        ["ceil_div(m, 64)", "rows"],
        [64],
        {
            "y": {"shape": ["rows", "m"], "dtype": "float32", "role": "inout"},
            "x": {"shape": ["rows", "m"], "dtype": "float32", "role": "in"},
            "keep": {"shape": ["m"], "dtype": "float32", "role": "in"},
        },
        {"rows": 6, "m": 700},
    ),
    "row_reduction_masked_term": (
        """
__global__ void masked_rowmax(float* out, const float* x, const float* w, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    float best = -1e30f;
    for (int j = 0; j < cols; ++j) {
        float v = x[i * cols + j];
        if (j < cols - 1 && w[j] > 0.0f) v = v * w[j];
        best = fmaxf(best, v);
    }
    out[i] = best;
}""",
        "masked_rowmax",
        ["ceil_div(rows, 32)"],
        [32],
        {
            "out": {"shape": ["rows"], "dtype": "float32", "role": "out"},
            "x": {"shape": ["rows", "cols"], "dtype": "float32", "role": "in"},
            "w": {"shape": ["cols"], "dtype": "float32", "role": "in"},
        },
        {"rows": 100, "cols": 20},
    ),
    "and_return": (
        """
__global__ void and_return(float* out, const float* x, const float* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && m[i] < 0.0f) return;
    if (i < n) out[i] = x[i] + 2.0f;
}""",
        "and_return",
        ["ceil_div(n, 128)"],
        [128],
        _params("out: inout x: in m: in", {}, {}),
        {"n": 700},
    ),
}

# ported, but not by a recogniser (or not on every spelling): the numbers must still be right
LITERAL: dict[str, tuple] = {
    "masked_sum_term": (
        """
__global__ void pos_sum(float* total, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n && x[i] > 0.0f) ? x[i] : 0.0f;
    atomicAdd(total, v);
}""",
        "pos_sum",
        ["ceil_div(n, 256)"],
        [256],
        {
            "total": {"shape": [1], "dtype": "float32", "role": "inout"},
            "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
        },
        {"n": 1000},
    ),
    "masked_row": (
        """
__global__ void masked_rowsum(float* out, const float* x, const unsigned char* valid,
                              int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && valid[row] != 0) {
        float s = 0.0f;
        for (int j = 0; j < cols; j++) s += x[row * cols + j];
        out[row] = s;
    }
}""",
        "masked_rowsum",
        ["ceil_div(rows, 64)"],
        [64],
        {
            "out": {"shape": ["rows"], "dtype": "float32", "role": "inout"},
            "x": {"shape": ["rows", "cols"], "dtype": "float32", "role": "in"},
            "valid": {"shape": ["rows"], "dtype": "uint8", "role": "in"},
        },
        {"rows": 200, "cols": 33},
    ),
    "loop_condition": (
        """
__global__ void gather_until(float* out, const float* x, const int* idx, int n, int K) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < K && idx[k] >= 0; ++k) s += x[i] * (float)k;
        out[i] = s;
    }
}""",
        "gather_until",
        ["ceil_div(n, 128)"],
        [128],
        {
            "out": {"shape": ["n"], "dtype": "float32", "role": "out"},
            "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
            "idx": {"shape": ["K"], "dtype": "int32", "role": "in"},
        },
        {"n": 300, "K": 8},
    ),
}


def _write(tmp_path: Path, name: str, case: tuple) -> tuple[Path, object]:
    src, kernel, grid, block, params, sizes = case
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src.lstrip())
    b = binding_from_dict(
        {"kernel": kernel, "launch": {"grid": grid, "block": block}, "params": {**params, **sizes}},
        path=f"<{name}>",
    )
    return cu, b


def _port(tmp_path: Path, name: str, case: tuple, api_name: str, lowering: str) -> Path:
    cu, b = _write(tmp_path, name, case)
    res = api.port(cu, binding=b, api=api_name, lowering=lowering)
    assert res.source is not None, [d.message for d in res.diagnostics]
    out = tmp_path / f"{name}_{api_name}.py"
    out.write_text(res.source)
    return out


@pytest.mark.parametrize("api_name", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_recognised_port_reads_only_the_guarded_region(tmp_path, name, api_name) -> None:
    case = KERNELS[name]
    port = _port(tmp_path, name, case, api_name, "recognise")
    cu, b = _write(tmp_path, name, case)
    assert_port_matches(cu, port, binding=b, seeds=1, fail_on="error")


@pytest.mark.parametrize("name", sorted(LITERAL))
def test_other_spellings_port_with_right_numbers(tmp_path, name) -> None:
    case = LITERAL[name]
    port = _port(tmp_path, name, case, "nki", "auto")
    cu, b = _write(tmp_path, name, case)
    assert_port_matches(cu, port, binding=b, seeds=1, fail_on="error")


def test_guard_bounds_the_map_domain(tmp_path) -> None:
    cu, b = _write(tmp_path, "and_block", KERNELS["and_block"])
    intent = to_text(api.port(cu, binding=b, emit="intent").ir_intent)
    assert "for i < n;" in intent, intent
    assert "select(keep[i] > 0.5" in intent, intent


def test_data_dependent_loop_condition_is_refused_honestly(tmp_path) -> None:
    cu, b = _write(tmp_path, "loop_condition", LITERAL["loop_condition"])
    res = api.port(cu, binding=b, lowering="recognise")
    assert res.source is None
    assert any(d.code == "C2N2019" for d in res.diagnostics)


@pytest.mark.parametrize("name", ["and_block", "nested_2d", "ternary_value"])
def test_interpreter_short_circuits(tmp_path, name) -> None:
    """The interpreter checks every global read; a right side evaluated past the guard would
    read element ``n`` of an ``n``-element tensor and fail."""
    cu, b = _write(tmp_path, name, KERNELS[name])
    out = api.run(cu, b)
    assert all(np.isfinite(v).all() for v in out.values())


def test_interpreter_rejects_the_same_read_unguarded(tmp_path) -> None:
    src, *rest = KERNELS["and_block"]
    eager = src.replace(
        "if (i < n && keep[i] > 0.5f)", "float k = keep[i];\n    if (i < n && k > 0.5f)"
    )
    cu, b = _write(tmp_path, "eager", (eager, *rest))
    with pytest.raises(DiagnosticError, match="out-of-bounds global read of 'keep'"):
        api.run(cu, b)


def _if(src: str) -> A.If:
    fn = parse_source(src, "k.cu").functions[0]
    return next(s for s in fn.body.body if isinstance(s, A.If))


@pytest.mark.parametrize(
    ("cond", "head", "tail"),
    [
        ("i < n && m[i] > 0", "i < n", "m[i] > 0"),
        ("(i < n) && (j < k) && w[i * k + j] != 0", "i < n && j < k", "w[i * k + j] != 0"),
        ("i < n && m[i] > 0 && j < k", "i < n", "m[i] > 0 && j < k"),
    ],
)
def test_split_at_the_first_memory_read(cond, head, tail) -> None:
    s = _if(
        f"__global__ void f(float* m, float* w, int n, int k) {{ int i = threadIdx.x; int j = blockIdx.x; if ({cond}) m[i] = 1; }}"
    )
    h, t = shortcirc.split(s.cond, "&&")
    assert len(shortcirc.operands(h, "&&")) == len(head.split("&&"))
    assert len(shortcirc.operands(t, "&&")) == len(tail.split("&&"))


@pytest.mark.parametrize("cond", ["m[i] > 0 && i < n", "i < n && j < k", "i < n || m[i] > 0"])
def test_no_split_without_an_index_part_first(cond) -> None:
    s = _if(
        f"__global__ void f(float* m, int n, int k) {{ int i = threadIdx.x; int j = i; if ({cond}) m[i] = 1; }}"
    )
    assert shortcirc.rewrite_if(s) is None


def test_and_return_stays_whole() -> None:
    """``if (i < n && m[i]) return;`` split would leave ``m[i]``'s return in force where
    ``i >= n``; it stays one condition, its load padded instead."""
    s = _if(
        "__global__ void f(float* m, int n) { int i = threadIdx.x; "
        "if (i < n && m[i] == 0) return; m[i] = 2; }"
    )
    assert shortcirc.rewrite_if(s) is None


def test_or_return_becomes_two_returns() -> None:
    s = _if(
        "__global__ void f(float* m, int n) { int i = threadIdx.x; if (i >= n || m[i] == 0) return; m[i] = 2; }"
    )
    parts = shortcirc.rewrite_if(s)
    assert parts is not None and len(parts) == 2
    assert not shortcirc.reads_memory(parts[0].cond) and shortcirc.reads_memory(parts[1].cond)
