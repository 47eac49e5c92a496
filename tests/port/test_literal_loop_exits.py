"""Per-thread ``break`` and ``continue`` in the literal lowering: stated as flags that mask the
threads that left the loop (for the rest of it) or skipped the rest of an iteration
(:mod:`cuda2nki.lift.literal.flow`); the ports match the SIMT interpreter on both targets."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.flow import flag_exits, owns_exit
from tests.port.test_literal import _kernel, _matches
from tests.port.test_literal_runtime_loops import runs_on_device

_SEARCH = (
    'hay = { shape = ["n"], dtype = "float32", role = "in", range = [0.0, 1.0] }\n'
    'key = { shape = ["n"], dtype = "float32", role = "in", range = [0.0, 1.0] }\n'
    'pos = { shape = ["n"], dtype = "int32", role = "out" }\n'
    "n = 150"
)

SEARCHES = {
    # the counter is declared outside the loop but never read after it
    "break_counter_outside": """
__global__ void find_first(const float* hay, const float* key, int* pos, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int found = -1;
        int x;
        for (x = 0; x < n; x++) {
            if (hay[x] >= key[i]) {
                found = x;
                break;
            }
        }
        if (found == -1) found = n - 1;
        pos[i] = found;
    }
}
""",
    # several exits, a continue, work after the exit test, a counter scoped to the loop
    "break_and_continue_mixed": """
__global__ void scan_hits(const float* hay, const float* key, int* pos, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int hits = 0;
    float limit = key[t];
    for (int s = 0; s < n && s < 40; s += 3) {
        float h = hay[s];
        if (h < 0.2f) continue;
        if (h > limit) {
            hits += 100;
            break;
        }
        hits += 1;
        if (hits > 6 && t % 2 == 0) break;
    }
    pos[t] = hits;
}
""",
}


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_per_thread_exits_match(tmp_path, name):
    src = SEARCHES[name]
    kernel = src.split("void ")[1].split("(")[0]
    cu = _kernel(tmp_path, src, kernel, '"ceil_div(n, 64)"', "64", _SEARCH,
                 ["n = 1", "n = 65"])  # fmt: skip
    _matches(cu, tmp_path)


def test_continue_over_an_affine_guard_in_a_2d_block(tmp_path):
    """A tile load whose threads past the tile skip an iteration (a 2-D block)."""
    src = """
__global__ void halo_sum(float* out, const float* img, int h, int w) {
    __shared__ float tile[20 * 20];
    int bx = blockIdx.x * 16, by = blockIdx.y * 16;
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 2; c++) {
            int tr = threadIdx.y + 16 * r, tc = threadIdx.x + 16 * c;
            if (tr >= 18 || tc >= 18) continue;
            int gr = by + tr - 1, gc = bx + tc - 1;
            tile[tr * 20 + tc] = (gr >= 0 && gr < h && gc >= 0 && gc < w) ? img[gr * w + gc] : 0.0f;
        }
    }
    __syncthreads();
    int y = by + threadIdx.y, x = bx + threadIdx.x;
    if (y < h && x < w)
        out[y * w + x] = tile[(threadIdx.y + 1) * 20 + threadIdx.x + 1]
                       + tile[threadIdx.y * 20 + threadIdx.x + 1]
                       + tile[(threadIdx.y + 2) * 20 + threadIdx.x + 1];
}
"""
    params = (
        'out = { shape = ["h", "w"], dtype = "float32", role = "out" }\n'
        'img = { shape = ["h", "w"], dtype = "float32", role = "in" }\nh = 20\nw = 33'
    )
    cu = _kernel(tmp_path, src, "halo_sum", '"ceil_div(w, 16)", "ceil_div(h, 16)"', "16, 16",
                 params, ["h = 16\nw = 16", "h = 5\nw = 17"])  # fmt: skip
    _matches(cu, tmp_path)


def test_exit_once_every_thread_of_a_row_passed_the_end(tmp_path):
    """``if (i * B + tx >= n) break;`` inside a uniform loop nested in another."""
    src = """
__global__ void strided_rows(float* acc, const float* v, int n, int rows) {
    int tx = threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < rows; j++) {
        for (int i = 0; i < 4; i++) {
            if (i * 32 + tx >= n) {
                break;
            }
            s += v[j * n + i * 32 + tx];
        }
    }
    if (tx < n) acc[tx] = s;
}
"""
    params = (
        'acc = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'v = { shape = ["rows", "n"], dtype = "float32", role = "in" }\nn = 100\nrows = 3'
    )
    cu = _kernel(tmp_path, src, "strided_rows", "1", "128", params,
                 ["n = 40\nrows = 2", "n = 128\nrows = 1"])  # fmt: skip
    _matches(cu, tmp_path)


def test_a_while_loop_left_only_by_a_data_break_runs_on_the_device(tmp_path):
    src = """
__global__ void spin(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    while (1) {
        v = v * 0.5f;
        if (v < 1.0f) break;
    }
    if (i < n) y[i] = v;
}
"""
    cu = _kernel(tmp_path, src, "spin", '"ceil_div(n, 32)"', "32",
                 'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
                 'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 64',
                 ["n = 96", "n = 32"])  # fmt: skip
    runs_on_device(cu, tmp_path)


def test_a_counter_read_after_a_data_break_keeps_its_value(tmp_path):
    """A thread keeps the counter value it broke at (saved at the break, restored after the
    loop; the counter makes the loop a bounded one)."""
    src = """
__global__ void first_above(const float* hay, const float* key, int* pos, int n) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= n) return;
    int j = 0;
    for (; j < n; ++j)
        if (key[t] < hay[j]) break;
    pos[t] = j;
}
"""
    cu = _kernel(tmp_path, src, "first_above", '"ceil_div(n, 64)"', "64", _SEARCH,
                 ["n = 1", "n = 65"])  # fmt: skip
    _matches(cu, tmp_path)


def _loc():
    from cuda2nki.diagnostics import SourceLoc

    return SourceLoc("k.cu", 1, 1)


def test_rewrite_leaves_switch_breaks_and_nested_loops_their_own():
    """A ``break`` of a ``switch`` is the switch's; the inner loop's exits are flagged on it."""
    loc = _loc()
    i32 = A.ScalarType(name="int32")
    case = A.Case(loc=loc, values=(1,), body=(A.Break(loc=loc),))
    sw = A.Switch(loc=loc, cond=A.IntLit(loc=loc, value=1, ty=i32), cases=(case,))
    inner = A.While(loc=loc, cond=A.BoolLit(loc=loc, value=True), body=A.Block(
        loc=loc, body=(A.If(loc=loc, cond=A.Name(loc=loc, name="c"), then=A.Break(loc=loc)),)))  # fmt: skip
    outer = A.For(loc=loc, init=(), cond=None, step=None, body=A.Block(loc=loc, body=(sw, inner)))
    assert not owns_exit(outer.body)
    out = flag_exits(A.Block(loc=loc, body=(outer,)))
    loop = out.body[0]
    assert isinstance(loop, A.For) and loop.body.body[0] == sw  # untouched: no exit of its own
    flagged = loop.body.body[1]
    assert isinstance(flagged, A.Block) and isinstance(flagged.body[0], A.VarDecl)
    assert not owns_exit(flagged.body[1].body)
