"""Literal ports load a value once: a read repeated with nothing written in between takes the
earlier tile, and a read a loop does not change moves in front of the loop (one DMA instead of
one per iteration).  Reads of data the loop writes, or at addresses it changes, stay where the
CUDA code has them.  Public trees' kernels of these forms (a sum over a loop that rereads the
same element, ``x[i] * x[i]``, a bias per column read in a row loop) failed ``check`` on
C2N5006 (redundant reloads) and C2N5014 (bytes moved beyond need) although their numbers
matched."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from cuda2nki.lift.literal.program import Branch, Instr, LiteralProgram, Loop
from cuda2nki.lift.literal.reuse import reuse_loads
from tests.port.test_literal import _kernel, _matches

_VEC = (
    'a = { shape = ["n"], dtype = "float32", role = "in" }\n'
    'b = { shape = ["n"], dtype = "float32", role = "in" }\n'
    'c = { shape = ["n"], dtype = "float32", role = "out" }\n'
    "n = 300"
)

#: loads a loop does not change: each must become one DMA in front of the loop
INVARIANT = {
    "for_loop_sum": """
__global__ void k(float *a, float *b, float *c, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        float sum = 0;
        for (int j = 0; j < 20; j++) sum += a[tid] + b[tid];
        c[tid] = sum;
    }
}
""",
    "while_loop_early_return": """
__global__ void k(const float* a, const float* b, float* c, int n) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i >= n) return;
    float acc = 1.0f;
    int r = 0;
    while (r < 7) { acc = acc * 0.5f + a[i] * b[i]; ++r; }
    c[i] = acc;
}
""",
    "nested_loops_pointer": """
__global__ void k(const float* __restrict__ a, const float* __restrict__ b, float* c, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const float* pa = a + idx;
    float s = 0.0f;
    for (int u = 0; u < 3; ++u)
        for (int v = 0; v < 4; ++v)
            if (idx < n) s += pa[0] * (float)(u + v) - b[idx];
    if (idx < n) c[idx] = s;
}
""",
}

#: the same element read several times in one statement or in a row of statements
REPEATED = {
    "square_plus": """
__global__ void k(float *a, float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * a[i] + a[i] - b[i] * b[i];
}
""",
    "locals_between": """
__global__ void k(const float* a, const float* b, float* c, int n) {
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    if (g < n) {
        float x = a[g];
        float y = b[g] + 1.0f;
        float z = a[g] * y;
        c[g] = z + x + b[g];
    }
}
""",
}

#: reads that must stay: the loop (or a store in between) changes what they read
KEEP = {
    "store_between": """
__global__ void k(float *a, float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i];
        c[i] = c[i] * 2.0f + b[i];
        c[i] = c[i] + c[i];
    }
}
""",
    "loop_writes_what_it_reads": """
__global__ void k(float *a, float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = b[i];
        for (int j = 0; j < 5; j++) c[i] = c[i] * 0.5f + a[i];
    }
}
""",
}


def _kernel_lines(src: str) -> list[str]:
    return src[src.index("@nki.jit") :].splitlines()


def _loop_loads(src: str) -> list[str]:
    """Load lines indented deeper than the per-block function's body (inside a loop)."""
    out = []
    for line in _kernel_lines(src):
        if re.search(r"= _c2n_load(_at)?\(", line) and len(line) - len(line.lstrip()) > 8:
            out.append(line.strip())
    return out


def _port(tmp: Path, src: str, target: str = "nki") -> str:
    from cuda2nki import api

    cu = _kernel(tmp, src, "k", '"ceil_div(n, 256)"', "256", _VEC, ["n = 1", "n = 257"])
    res = api.port(cu, lowering="literal", api=target)
    assert res.source is not None
    return res.source


@pytest.mark.parametrize("name", sorted(INVARIANT))
def test_invariant_loads_leave_the_loop(tmp_path: Path, name: str) -> None:
    src = INVARIANT[name]
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 256)"', "256", _VEC, ["n = 1", "n = 257"])
    _matches(cu, tmp_path)
    port = _port(tmp_path, src)
    assert _loop_loads(port) == [], _loop_loads(port)


@pytest.mark.parametrize("name", sorted(REPEATED))
def test_a_repeated_read_is_one_load(tmp_path: Path, name: str) -> None:
    src = REPEATED[name]
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 256)"', "256", _VEC, ["n = 1", "n = 257"])
    _matches(cu, tmp_path)
    port = _port(tmp_path, src)
    loads = [ln for ln in _kernel_lines(port) if "= _c2n_load(" in ln]
    assert len(loads) == 2, loads  # one of 'a', one of 'b'


@pytest.mark.parametrize("name", sorted(KEEP))
def test_reads_of_written_data_stay(tmp_path: Path, name: str) -> None:
    src = KEEP[name]
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 256)"', "256", _VEC, ["n = 1", "n = 257"])
    _matches(cu, tmp_path)
    port = _port(tmp_path, src)
    reads_c = [ln for ln in _kernel_lines(port) if re.search(r"_c2n_load\(c\b", ln)]
    assert len(reads_c) >= 2 if name == "store_between" else len(reads_c) == 1, reads_c
    if name == "loop_writes_what_it_reads":
        assert any("_c2n_load(c" in ln for ln in _loop_loads(port))
        assert not any("_c2n_load(a" in ln for ln in _loop_loads(port))


def test_two_dimensional_blocks_hoist_a_row_invariant_load(tmp_path: Path) -> None:
    # a column bias read in a loop over rows of a 2-D block: loaded once per block
    src = """
__global__ void k(const float* x, const float* bias, float* y, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int r0 = threadIdx.y;
    if (col >= cols) return;
    for (int r = r0; r < rows; r += blockDim.y)
        y[r * cols + col] = x[r * cols + col] + bias[col];
}
"""
    params = (
        'x = { shape = ["rows", "cols"], dtype = "float32", role = "in" }\n'
        'bias = { shape = ["cols"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["rows", "cols"], dtype = "float32", role = "out" }\n'
        "rows = 9\ncols = 40"
    )
    cu = _kernel(tmp_path, src, "k", '"ceil_div(cols, 16)"', "16, 4", params,
                 ["rows = 3\ncols = 17"])  # fmt: skip
    _matches(cu, tmp_path)
    from cuda2nki import api

    port = api.port(cu, lowering="literal").source
    assert port is not None
    loop = _loop_loads(port)
    assert not any("bias" in ln for ln in loop), loop
    assert any("(x," in ln for ln in loop), loop


# ---- the rewrite on programs written by hand ----------------------------------------------


def _i(kind: str, line: int = 0, **ops: str) -> Instr:
    return Instr(kind, tuple(ops.items()), line)


def _load(dst: str, tensor: str, base: str) -> Instr:
    return _i("load", dst=dst, tensor=tensor, base=base, cp="2", cf="1", dtype="nl.float32")


def _prog(*body) -> LiteralProgram:  # noqa: ANN002
    return LiteralProgram("k", ("a", "c"), 128, 2, "", tuple(body))


def _block(*body) -> Loop:  # noqa: ANN002
    return Loop("def", "_c2n_block(_bx, _by, _bz)", tuple(body))


def test_a_call_that_may_write_ends_reuse() -> None:
    body = _block(
        _i("let", dst="i", value="_bx * 256"),
        _load("_ld1", "a", "i"),
        _i("call", expr="_c2n_atomic(a, i, 2, 1, _ld1, None, 'add')"),
        _load("_ld2", "a", "i"),
    )
    out = reuse_loads(_prog(body)).body[0]
    assert [n.kind for n in out.body] == ["let", "load", "call", "load"]


def test_a_branch_keeps_only_what_both_sides_keep() -> None:
    body = _block(
        _i("let", dst="i", value="_bx * 256"),
        _load("_ld1", "a", "i"),
        Branch(
            "i > 4", (_i("store", tensor="a", base="i", cp="2", cf="1", value="_ld1", mask="None"),)
        ),
        _load("_ld2", "a", "i"),
        _load("_ld3", "a", "i"),
    )
    out = reuse_loads(_prog(body)).body[0]
    kinds = [(n.kind, dict(n.operands).get("value")) for n in out.body if isinstance(n, Instr)]
    assert kinds[-2:] == [("load", None), ("let", "_ld2")]


def test_a_counter_the_loop_changes_keeps_the_load_inside() -> None:
    loop = Loop(
        "while", "int(j < 4)", (_load("_ld1", "a", "i + j"), _i("let", dst="j", value="j + 1"))
    )
    body = _block(_i("let", dst="i", value="_bx * 256"), _i("let", dst="j", value="0"), loop)
    out = reuse_loads(_prog(body)).body[0]
    assert not any(getattr(n, "kind", "") == "load" for n in out.body[:-1])  # none hoisted
    # each iteration takes its own tile (read in a run of iterations: tests/port/test_literal_runs)
    assert isinstance(out.body[-1], Loop) and out.body[-1].body[0].get("dst") == "_ld1"
    # a counter the loop steps by a value it changes is no counted loop: one load per iteration
    loop = replace(loop, body=(loop.body[0], _i("let", dst="j", value="j + i")))
    body = _block(_i("let", dst="i", value="_bx * 256"), _i("let", dst="j", value="0"), loop)
    assert reuse_loads(_prog(body)).body[0].body[-1].body[0].kind == "load"


def test_a_block_invariant_load_of_read_only_data_moves_in_front_of_the_block() -> None:
    body = _block(_i("let", dst="i", value="_bx * 256"), _load("_ld1", "a", "7"),
                  _load("_ld2", "a", "i"), _i("store", tensor="c", base="i", cp="2", cf="1",
                                              value="_ld1", mask="None"))  # fmt: skip
    prog = reuse_loads(_prog(_i("let", dst="n", value="a.shape[0]"), body))
    assert [getattr(n, "kind", None) for n in prog.body] == ["let", "load", "def"]
    # a tensor some block writes stays inside: the other blocks' stores may change it
    body = _block(_load("_ld1", "c", "7"), _i("store", tensor="c", base="0", cp="2", cf="1",
                                             value="_ld1", mask="None"))  # fmt: skip
    assert reuse_loads(_prog(body)).body[0].kind == "def"


# ---- guarded stores --------------------------------------------------------------------------

#: a store under a guard on thread indices: blocks whose threads all pass it store plainly
GUARDED = {
    "bound": "if (i < n) c[i] = a[i] * 2.0f;",
    "early_return": "if (i >= n) return; c[i] = a[i] * 2.0f;",
    "two_sided": "if (i >= 3 && i < n - 1) c[i] = a[i] * 2.0f;",
    "every_other_thread": "if (i < n && threadIdx.x % 2 == 0) c[i] = a[i] * 2.0f;",
    # a return on data: which threads store is not known when the port is traced
    "data_return": "if (i >= n) return; if (a[i] > 600.0f) return; c[i] = a[i] * 2.0f;",
}


def _hbm_loads(tmp: Path, body: str, n: int) -> int:
    import numpy as np

    from cuda2nki import api
    from cuda2nki.fidelity.tracefind import summarise

    src = f"""
__global__ void k(const float* a, const float* b, float* c, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    {body}
}}
"""
    cu = _kernel(tmp, src, "k", '"ceil_div(n, 256)"', "256", _VEC, ["n = 1", "n = 257"])
    _matches(cu, tmp)
    res = api.port(cu, lowering="literal")
    assert res.source is not None
    port = tmp / "guarded.py"
    port.write_text(res.source)
    x = np.arange(n, dtype=np.float32)
    sim = api.simulate(port, {"a": x, "b": x})
    return sum(len(v) for v in summarise(sim.trace).loads_by_source.values())


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_a_guarded_store_reads_back_only_where_threads_are_idle(tmp_path: Path, name: str) -> None:
    # 16 blocks of 256 threads over 4096 elements, batched into 4 tiles of 1024 consecutive
    # threads (a kernel naming threadIdx.x on its own keeps its 16 blocks): one load of 'a'
    # per tile, and a read of the old elements of 'c' only in tiles where the guard keeps some
    # threads idle
    loads = _hbm_loads(tmp_path, GUARDED[name], 4096)
    tiles, idle = {"bound": (4, 0), "early_return": (4, 0), "two_sided": (4, 2),
                   "every_other_thread": (16, 16), "data_return": (4, 4)}[name]  # fmt: skip
    assert loads == tiles + idle, loads
