"""The generic literal lowering (cuda2nki.lift.literal): literal ports match the SIMT
interpreter, or the kernel is refused with C2N2301 naming the construct (issue 4 §2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.port.literal_acceptance import check_literal

ROOT = Path(__file__).resolve().parents[2]

_BINDING = """\
kernel = "{kernel}"
[launch]
grid = [{grid}]
block = [{block}]
[params]
{params}
[check]
rtol = 1e-5
atol = 1e-5
{shapes}
"""


def _kernel(tmp: Path, src: str, kernel: str, grid: str, block: str, params: str, shapes=()):
    cu = tmp / f"{kernel}.cu"
    cu.write_text(src)
    extra = "".join(f"[[check.shapes]]\n{s}\n" for s in shapes)
    cu.with_suffix(".toml").write_text(
        _BINDING.format(kernel=kernel, grid=grid, block=block, params=params, shapes=extra)
    )
    return cu


def _matches(cu: Path, tmp: Path, lowering: str = "literal") -> None:
    for target in ("nki", "legacy"):
        out = check_literal(cu, tmp, lowering=lowering, target=target)
        assert out.status == "match", (target, out.status, out.detail)
        assert "C2N2300" in out.codes
        assert len(out.points) >= 2


def test_forced_literal_corpus_map_matches_on_ragged_sizes(tmp_path):
    _matches(ROOT / "corpus" / "basic" / "vector_add.cu", tmp_path)


def test_divergent_branches_select_and_guarded_stores(tmp_path):
    src = """
__global__ void k(float* y, const float* x, int n, float t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    int flag = 0;
    if (v > t) { v = v * 2.0f; flag = 1; } else { v = -v; }
    y[i] = flag ? v + 1.0f : fmaxf(v, 0.5f);
    if (threadIdx.x % 3 == 0) y[i] = 7.0f;
}
"""
    cu = _kernel(tmp_path, src, "k", '"ceil_div(n, 96)"', "96",
                 'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
                 'x = { shape = ["n"], dtype = "float32", role = "in" }\nn = 300\nt = 0.25',
                 ["n = 97", "n = 1"])  # fmt: skip
    _matches(cu, tmp_path)


def test_strided_loop_shared_tree_reduction_and_single_writer(tmp_path):
    src = """
#define T 64
__global__ void rowsum(const float* x, float* out, int rows, int cols) {
    __shared__ float s[T];
    int r = blockIdx.x;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += x[r * cols + c];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[r] = s[0];
}
"""
    cu = _kernel(tmp_path, src, "rowsum", '"rows"', "64",
                 'x = { shape = ["rows", "cols"], dtype = "float32", role = "in" }\n'
                 'out = { shape = ["rows"], dtype = "float32", role = "out" }\n'
                 "rows = 3\ncols = 200", ["cols = 5", "rows = 2\ncols = 64"])  # fmt: skip
    _matches(cu, tmp_path)


def test_2d_block_device_function_and_local_array(tmp_path):
    src = """
__device__ float scale(float v, float a) { return a * v; }
__global__ void k2(const float* a, float* b, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols) return;
    float acc[2] = {0.0f, 1.0f};
    for (int j = 0; j < 2; ++j) acc[j] += scale(a[r * cols + c], 1.5f + j);
    b[c * rows + r] = acc[0] - acc[1];
}
"""
    cu = _kernel(tmp_path, src, "k2", '"ceil_div(cols, 16)", "ceil_div(rows, 8)"', "16, 8",
                 'a = { shape = ["rows", "cols"], dtype = "float32", role = "in" }\n'
                 'b = { shape = ["cols", "rows"], dtype = "float32", role = "out" }\n'
                 "rows = 20\ncols = 33", ["rows = 8\ncols = 16", "rows = 3\ncols = 1"])  # fmt: skip
    _matches(cu, tmp_path)


def test_warp_shuffles_go_through_an_exchange_buffer(tmp_path):
    src = """
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__global__ void rows(const float* x, float* y, float* first, int n, int c) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (row >= n) return;
    float s = 0.0f;
    for (int j = lane; j < c; j += 32) s += x[row * c + j];
    s = warp_sum(s);
    float d = __shfl_down_sync(0xffffffff, s + lane, 3);
    float b = __shfl_sync(0xffffffff, (float)lane, 5);
    y[row * 32 + lane] = d + b;
    if (lane == 0) first[row] = s;
}
"""
    cu = _kernel(tmp_path, src, "rows", '"ceil_div(n * 32, 64)"', "64",
                 'x = { shape = ["n", "c"], dtype = "float32", role = "in" }\n'
                 'y = { shape = ["n", "32"], dtype = "float32", role = "out" }\n'
                 'first = { shape = ["n"], dtype = "float32", role = "out" }\n'
                 "n = 5\nc = 70", ["n = 2\nc = 3", "n = 1\nc = 32"])  # fmt: skip
    _matches(cu, tmp_path)


def test_index_arithmetic_known_at_trace_time_clamps_and_divisions(tmp_path):
    src = """
__global__ void idx(const float* x, float* y, int n, int w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int row = i / w;
    int col = i % w;
    int left = max(col - 1, 0);
    y[i] = x[row * w + left] + (float)row;
    if (col == w - 1) y[row * w] += 1.0f;
}
"""
    cu = _kernel(tmp_path, src, "idx", '"ceil_div(n, 64)"', "64",
                 'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
                 'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
                 "n = 150\nw = 7", ["n = 64\nw = 64", "n = 5\nw = 2"])  # fmt: skip
    _matches(cu, tmp_path)


def test_int_data_nested_divergence_uniform_break_and_return_in_loop(tmp_path):
    src = """
__global__ void mix(const int* v, int* out, int n, int lim) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (int k = 0; k < 8; ++k) {
        if (k == lim) break;
        if (i + k >= n) return;
        int x = v[i + k];
        if (x > 10) {
            if ((x & 1) == 0) acc += x; else acc -= 1;
        } else {
            acc = acc * 2 + k;
        }
    }
    if (i < n) out[i] = acc;
}
"""
    cu = _kernel(tmp_path, src, "mix", '"ceil_div(n, 32)"', "32",
                 'v = { shape = ["n"], dtype = "int32", role = "in", range = [0, 20] }\n'
                 'out = { shape = ["n"], dtype = "int32", role = "out" }\n'
                 "n = 70\nlim = 5", ["n = 33\nlim = 9", "n = 8\nlim = 0"])  # fmt: skip
    _matches(cu, tmp_path)


def test_atomics_and_shared_scalars_apply_every_active_update(tmp_path):
    src = """
__global__ void acc(const float* x, const int* v, float* total, int* extrema, float* rows,
                    int n) {
    __shared__ float s;
    __shared__ int top;
    if (threadIdx.x == 0) { s = 0.0f; top = -1000; }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&s, x[i]);
        atomicMax(&top, v[i]);
        atomicAdd(&rows[i % 4], 1.0f);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(total, s);
        atomicMax(&extrema[0], top);
        atomicMin(&extrema[1], top);
    }
}
"""
    cu = _kernel(tmp_path, src, "acc", '"ceil_div(n, 64)"', "64",
                 'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
                 'v = { shape = ["n"], dtype = "int32", role = "in", range = [-50, 50] }\n'
                 'total = { shape = ["1"], dtype = "float32", role = "out" }\n'
                 'extrema = { shape = ["2"], dtype = "int32", role = "out" }\n'
                 'rows = { shape = ["4"], dtype = "float32", role = "out" }\n'
                 "n = 300", ["n = 64", "n = 5"])  # fmt: skip
    _matches(cu, tmp_path)


def test_unclaimed_kernel_falls_back_to_the_literal_lowering(monkeypatch):
    from cuda2nki import pipeline
    from cuda2nki.diagnostics import SourceLoc, make

    refusal = make("C2N2010", SourceLoc("vector_add.cu", 1, 1), kernel="vector_add", what="x")
    monkeypatch.setattr(pipeline, "_lift", lambda tu, name, b: {"diagnostics": [refusal]})
    cu = ROOT / "corpus" / "basic" / "vector_add.cu"
    res = pipeline.port_file(cu)
    codes = [d.code for d in res.diagnostics]
    assert res.literal and res.source is not None and res.exit_code == 1
    assert codes.index("C2N2010") < codes.index("C2N2300")
    assert "no idiom recogniser claimed it" in res.diagnostics[-1].message
    strict = pipeline.port_file(cu, lowering="recognise")
    assert strict.source is None and "C2N2300" not in {d.code for d in strict.diagnostics}


def test_index_locals_updated_under_index_conditions(tmp_path):
    src = """
__global__ void wrap(const float* x, float* y, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = (i - shift) % n;
        if (j < 0) j += n;
        int k = i + 1;
        if (k >= n) k = n - 1;
        y[i] = x[j] + (i & 1 ? x[k] : 0.0f);
    }
}
"""
    cu = _kernel(tmp_path, src, "wrap", '"ceil_div(n, 32)"', "32",
                 'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
                 'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
                 "n = 100\nshift = 7", ["n = 33\nshift = 40", "n = 3\nshift = -1"])  # fmt: skip
    _matches(cu, tmp_path)


def test_claimed_kernel_keeps_its_recogniser_by_default(tmp_path):
    out = check_literal(ROOT / "corpus" / "basic" / "vector_add.cu", tmp_path)
    assert out.status == "claimed"


@pytest.mark.parametrize(
    ("body", "construct"),
    [
        ("    static float s = 0.0f;\n    if (i < n) y[i] = x[i] + s;\n", "static local"),
        ("    if (i < n) y[i] = __shfl_sync(0xffffffff, x[i], 3, i % 4 + 1);\n",
         "width that is not a constant power of two"),
    ],
)  # fmt: skip
def test_constructs_without_a_faithful_literal_form_are_refused_by_name(tmp_path, body, construct):
    src = (
        "__global__ void r(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + body + "}\n"
    )
    cu = _kernel(tmp_path, src, "r", '"ceil_div(n, 32)"', "32",
                 'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
                 'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 64')  # fmt: skip
    out = check_literal(cu, tmp_path, lowering="literal")
    assert out.status == "refused"
    assert "C2N2301" in out.codes
    assert construct in out.detail and "(line " in out.detail


def test_cli_exit_codes_and_unknown_target_refusal(tmp_path):
    cu = ROOT / "corpus" / "basic" / "vector_add.cu"
    cli = [sys.executable, "-m", "cuda2nki.cli.main", "port", str(cu), "--lowering", "literal"]
    lit = subprocess.run([*cli, "-o", str(tmp_path / "p.py")], capture_output=True, text=True)
    assert lit.returncode == 1, lit.stderr
    assert "C2N2300" in lit.stdout + lit.stderr
    text = (tmp_path / "p.py").read_text()
    assert "def vector_add(a, b):" in text and "from vector_add.cu:" in text
    leg = subprocess.run([*cli, "--target", "legacy"], capture_output=True, text=True)
    assert leg.returncode == 1 and "import neuronxcc.nki" in leg.stdout
    from cuda2nki.pipeline import port_file

    other = port_file(cu, lowering="literal", target="trn-next")
    assert other.source is None and "C2N2302" in {d.code for d in other.diagnostics}


def test_literal_output_is_deterministic_and_ruff_clean(tmp_path):
    from cuda2nki.pipeline import port_file

    cu = ROOT / "corpus" / "basic" / "vector_add.cu"
    a = port_file(cu, lowering="literal").source
    b = port_file(cu, lowering="literal").source
    assert a is not None and a == b
    path = tmp_path / "port.py"
    path.write_text(a)
    ruff = Path(sys.executable).with_name("ruff")
    if ruff.exists():
        r = subprocess.run([str(ruff), "check", "--no-cache", str(path)], capture_output=True)
        assert r.returncode == 0, r.stdout


def test_public_api_chooses_the_lowering() -> None:
    from cuda2nki import api

    cu = Path(__file__).resolve().parents[2] / "corpus" / "basic" / "vector_add.cu"
    assert api.port(cu).idiom == "map"
    forced = api.port(cu, lowering="literal")
    assert forced.idiom == "literal" and forced.source is not None
    assert "C2N2300" in {d.code for d in forced.diagnostics}


@pytest.mark.parametrize(
    "branch",
    [
        "if (sync_all) { __syncthreads(); }",
        "if (sync_all) __syncthreads(); else { __syncthreads(); }",
        "if (sync_all != 0) { /* nothing but a barrier */ __syncthreads(); }",
    ],
)
def test_a_uniform_branch_that_lowers_to_nothing_keeps_a_body(tmp_path, branch):
    """`if (flag) __syncthreads();` under a uniform condition has no code of its own in the port:
    the branch is still valid Python."""
    src = f"""
#define T 64
__device__ float block_sum(float v, int sync_all) {{
    __shared__ float s[T];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {{
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }}
    float total = s[0];
    {branch}
    return total;
}}
__global__ void rowsum2(const float* x, float* out, int rows, int cols) {{
    int r = blockIdx.x;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += x[r * cols + c];
    float total = block_sum(acc, 0);
    if (threadIdx.x == 0) out[r] = total;
}}
"""
    cu = _kernel(tmp_path, src, "rowsum2", '"rows"', "64",
                 'x = { shape = ["rows", "cols"], dtype = "float32", role = "in" }\n'
                 'out = { shape = ["rows"], dtype = "float32", role = "out" }\n'
                 "rows = 3\ncols = 200", ["cols = 5", "rows = 2\ncols = 64"])  # fmt: skip
    _matches(cu, tmp_path)
