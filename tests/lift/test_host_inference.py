"""Binding inference from host code: launch geometry evaluated through casts, ``ceil`` of float
divisions, ``dim3`` members, macros and helpers; scalar and launch arguments followed through
locals, launcher chains and loops over constant arrays; N-D shapes from strides."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict, eval_c_expr, load_bindings
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

MAP_2D = """
#define ROWS 96
#define COLS 40
__global__ void scale2(int rows, int cols, float *src, float *dst)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if ((r < rows) && (c < cols)) dst[r * COLS + c] = 2.0f * src[r * COLS + c];
}
"""

#: several spellings of one constant 2-D launch (each must give block [32, 8] and a grid that
#: follows the row count)
GEOMETRY_2D = {
    "float-ceil-and-members": """
void host(float *s, float *d) {
    dim3 block(32, 8);
    dim3 grid((size_t)(ceil(((float)COLS) / ((float)block.x))), (size_t)(ceil(((float)ROWS) / ((float)block.y))));
    scale2<<<grid, block>>>(ROWS, COLS, s, d);
}""",
    "macro-ceil-div-and-locals": """
#define CDIV(a, b) (((a) + (b) - 1) / (b))
void host(float *s, float *d) {
    int rows = ROWS, cols = COLS;
    const int bx = 32;
    const int by = 8;
    dim3 threads(bx, by, 1);
    dim3 blocks = dim3(CDIV(cols, bx), CDIV(rows, by));
    scale2<<<blocks, threads>>>(rows, cols, s, d);
}""",
    "helper-and-launcher-chain": """
static inline unsigned div_round_up(unsigned a, unsigned b) { return (a + b - 1) / b; }
void launch(int r, int c, float *s, float *d, int tx) {
    dim3 t(tx, 256 / tx);
    scale2<<<dim3(div_round_up(c, t.x), div_round_up(r, t.y)), t>>>(r, c, s, d);
}
void go(float *s, float *d, int tx) { launch(ROWS, COLS, s, d, tx); }
int main() {
    float *s, *d;
    cudaMalloc(&s, ROWS * COLS * sizeof(float));
    cudaMalloc(&d, ROWS * COLS * sizeof(float));
    int widths[] = {32, 16, 64};
    for (int w = 0; w < 3; w++) go(s, d, widths[w]);
}""",
}


@pytest.mark.parametrize("host", sorted(GEOMETRY_2D))
def test_constant_2d_geometry_in_several_spellings(host: str) -> None:
    tu = parse_source(MAP_2D + GEOMETRY_2D[host], "s.cu")
    partial, diags = infer_binding(tu, "scale2")
    assert partial["launch"]["block"] in ([32, 8], [32, 8, 1]), diags
    grid = partial["launch"]["grid"]
    for rows in (96, 97, 1):  # the grid follows the rows check chooses
        got = [eval_c_expr(g, {"rows": rows, "cols": 40}) for g in grid]
        assert got == [2, -(-rows // 8)], grid
    p = partial["params"]
    assert p["src"]["shape"] == ["rows", 40] and p["dst"]["role"] == "out"
    assert p["cols"] == 40  # tied to the stride it bounds
    assert 1 <= p["rows"] <= 96
    bnd, _ = binding_from_inference(tu, "scale2")
    assert bnd is not None


def test_a_loop_over_candidate_block_sizes_picks_the_first_and_says_so() -> None:
    tu = parse_source(MAP_2D + GEOMETRY_2D["helper-and-launcher-chain"], "s.cu")
    _, diags = infer_binding(tu, "scale2")
    launch = next(d for d in diags if d.code == "C2N2100" and "launch" in d.message)
    assert "picked 32, item 0 of {32, 16, 64}" in launch.message
    assert "s.cu:" in launch.message  # evidence: file:line


GELU = """
__host__ __device__ int ceil_div(int a, int b) { return (a + b - 1) / b; }
__global__ void act(float* out, const float* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = inp[i] > 0.0f ? inp[i] : 0.01f * inp[i];
}
void act1(float* out, const float* inp, int N, const int block_size) {
    const int grid_size = ceil_div(N, block_size);
    act<<<grid_size, block_size>>>(out, inp, N);
}
void forward(int which, float* out, const float* inp, int B, int T, int C, int block_size) {
    switch (which) { case 1: act1(out, inp, B * T * C, block_size); break; }
}
int main() {
    int B = 2, T = 64;
    int C = 48;
    float *o, *i;
    int block_sizes[] = {64, 128, 256};
    for (int j = 0; j < sizeof(block_sizes) / sizeof(int); j++) {
        int block_size = block_sizes[j];
        forward(1, o, i, B, T, C, block_size);
    }
}
"""


def test_launcher_parameters_are_followed_into_their_callers() -> None:
    partial, diags = infer_binding(parse_source(GELU, "g.cu"), "act")
    assert partial["launch"] == {"grid": ["ceil_div(N, 64)"], "block": [64]}
    assert partial["params"]["N"] == 2 * 64 * 48  # B * T * C from main
    assert partial["params"]["out"] == {"dtype": "float32", "role": "out", "shape": ["N"]}


def test_production_sizes_shrink_to_a_simulable_default() -> None:
    src = GELU.replace("int B = 2, T = 64;", "int B = 8, T = 1024;").replace("48;", "768;")
    partial, diags = infer_binding(parse_source(src, "g.cu"), "act")
    assert partial["params"]["N"] <= 1 << 14
    assert any("too large to simulate" in d.message for d in diags)


GRID_STRIDE = """
__global__ void axpy(float a, const float* __restrict__ x, float* y, size_t n) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
int main() {
    const size_t n = 1000;
    float *x, *y;
    cudaMalloc((void**)&x, n * sizeof(float));
    axpy<<<(unsigned)(n / 512), 128>>>(2.5f, x, y, n);
}
"""


def test_grid_stride_loop_and_a_float_scalar_from_main() -> None:
    partial, _ = infer_binding(parse_source(GRID_STRIDE, "a.cu"), "axpy")
    assert partial["launch"]["block"] == [128]
    assert partial["params"]["a"] == 2.5
    assert partial["params"]["y"]["role"] == "inout" and partial["params"]["y"]["shape"] == ["n"]


NO_VALUE = """
__global__ void blend(float* y, const float* x, float w, int flag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = flag ? w * x[i] : x[i];
}
void run(float* y, const float* x, float w, int flag, int n) {
    blend<<<(n + 127) / 128, 128>>>(y, x, w, flag, n);
}
"""


def test_scalars_without_host_values_get_defaults_with_a_note() -> None:
    tu = parse_source(NO_VALUE, "b.cu")
    partial, diags = infer_binding(tu, "blend")
    assert partial["params"]["w"] == 1.0 and partial["params"]["flag"] == 1
    assert partial["params"]["n"] == 256  # a size: any value does, check varies it
    notes = " ".join(d.message for d in diags if d.code == "C2N2100")
    assert "no value in the source" in notes
    bnd, _ = binding_from_inference(tu, "blend")
    assert bnd is not None
    assert [eval_c_expr(bnd.grid[0], {"n": n}) for n in (128, 129)] == [1, 2]


ND = {
    "btc-products": (
        """
__global__ void bias3(float* out, const float* inp, int B, int T, int C) {
    int b = blockIdx.y, t = blockIdx.x, c = threadIdx.x;
    if (b < B && t < T && c < C) out[(b * T + t) * C + c] = inp[b * T * C + t * C + c] + 1.0f;
}
void run(float* o, const float* i) { bias3<<<dim3(16, 4), 64>>>(o, i, 4, 16, 64); }
""",
        "bias3",
        {"out": ["B", "T", "C"], "inp": ["B", "T", "C"]},
    ),
    "column-loop-macro-stride": (
        """
#define NK 64
__global__ void rowsum(const float* A, float* s, int ni, int nk) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ni) {
        float acc = 0.0f;
        for (int k = 0; k < nk; k++) acc += A[i * NK + k];
        s[i] = acc;
    }
}
void run(const float* A, float* s) { int ni = 200, nk = NK; rowsum<<<(ni + 63) / 64, 64>>>(A, s, ni, nk); }
""",
        "rowsum",
        {"A": ["ni", 64], "s": ["ni"]},
    ),
}


@pytest.mark.parametrize("case", sorted(ND))
def test_nd_shapes_from_strides(case: str) -> None:
    src, kernel, want = ND[case]
    partial, diags = infer_binding(parse_source(src, "n.cu"), kernel)
    for name, shape in want.items():
        assert partial["params"][name]["shape"] == shape, (name, diags)
    binding_from_dict(partial)  # a complete binding


def test_bind_writes_a_sidecar_that_loads(tmp_path) -> None:
    from cuda2nki.cli.main import main

    src = tmp_path / "g.cu"
    src.write_text(GELU + NO_VALUE.replace("void run", "void run2"))
    out = tmp_path / "g.toml"
    assert main(["bind", str(src), "-o", str(out)]) == 0
    text = out.read_text()
    assert "[kernels.act.launch]" in text and "[kernels.blend.params]" in text
    assert f"{src}:" in text  # evidence
    bf = load_bindings(out)
    assert {b.kernel for b in bf.bindings} == {"act", "blend"}


def test_bind_marks_what_it_cannot_infer_as_todo(tmp_path, capsys) -> None:
    from cuda2nki.cli.main import main

    src = tmp_path / "k.cu"
    # no launch site, and a row per blockIdx.y: the layout follows the block's shape, so no
    # default launch is taken either
    kernel = NO_VALUE.split("void run")[0]
    src.write_text(kernel.replace("y[i] = flag", "y[blockIdx.y * n + i] = flag"))
    assert main(["bind", str(src), "--kernel", "blend"]) == 1
    got = capsys.readouterr()
    assert "# TODO" in got.out and '# grid = ["ceil_div(n, 256)"]' in got.out
    assert "blend: launch" in got.err
