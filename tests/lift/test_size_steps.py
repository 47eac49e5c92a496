"""Sizes a kernel is only run at multiples of: a grid rounded down to whole blocks, or rounded up
over a kernel with no guard while the host's size is a whole number of blocks.  Inference says so
(``[check.multiples]`` with a note), and check keeps its generated sizes multiples of the step."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.fidelity.inputs import test_points as points_of
from cuda2nki.frontend import parse_source
from cuda2nki.lift.bindtoml import kernel_toml
from cuda2nki.lift.infer import binding_from_inference, infer_binding
from cuda2nki.lift.steps import size_steps

STENCIL = """
#define T {tile}
__global__ void smooth(const float *src, float *dst, int {w}, int {h}) {{
  int c = blockIdx.x * T + threadIdx.x;
  int r = blockIdx.y * T + threadIdx.y;
  dst[r * {w} + c] = 0.25f * src[r * {w} + c];
}}
"""

# the same rounded-down launch, spelled four ways
DOWN_HOSTS = {
    "dim3-locals": """
void go(const float *s, float *d, int {w}, int {h}) {{
  int bx = {w} / T;
  int by = {h} / T;
  dim3 grid(bx, by);
  dim3 block(T, T);
  smooth<<<grid, block>>>(s, d, {w}, {h});
}}""",
    "inline-dim3": """
void go(const float *s, float *d, int {w}, int {h}) {{
  smooth<<<dim3({w} / T, {h} / T), dim3(T, T)>>>(s, d, {w}, {h});
}}""",
    "members": """
void go(const float *s, float *d, int {w}, int {h}) {{
  dim3 threads;
  threads.x = T; threads.y = T;
  dim3 blocks;
  blocks.x = {w} / threads.x;
  blocks.y = {h} / threads.y;
  smooth<<<blocks, threads>>>(s, d, {w}, {h});
}}""",
    "from-main": """
int main() {{
  int {w} = 640, {h} = 320;
  float *s, *d;
  cudaMalloc(&s, {w} * {h} * sizeof(float));
  cudaMalloc(&d, {w} * {h} * sizeof(float));
  dim3 grid({w} / T, {h} / T);
  smooth<<<grid, dim3(T, T)>>>(s, d, {w}, {h});
  return 0;
}}""",
}


def _stencil(host: str, tile: int = 16, w: str = "cols", h: str = "rows") -> str:
    return STENCIL.format(tile=tile, w=w, h=h) + DOWN_HOSTS[host].format(w=w, h=h)


@pytest.mark.parametrize("host", sorted(DOWN_HOSTS))
@pytest.mark.parametrize(("tile", "w", "h"), [(16, "cols", "rows"), (8, "nx", "ny")])
def test_grid_rounded_down_makes_sizes_multiples(host: str, tile: int, w: str, h: str) -> None:
    tu = parse_source(_stencil(host, tile, w, h), "down.cu")
    partial, diags = infer_binding(tu, "smooth")
    assert partial["check"]["multiples"] == {w: tile, h: tile}
    assert partial["params"][w] % tile == 0 and partial["params"][h] % tile == 0
    notes = [d.message for d in diags if f"a multiple of {tile}" in d.message]
    assert any("rounds" in m and "down" in m for m in notes), notes
    b, _ = binding_from_inference(tu, "smooth")
    assert b is not None and dict(b.multiples) == {w: tile, h: tile}
    for p in points_of(b):
        assert int(p.values[w]) % tile == 0 and int(p.values[h]) % tile == 0, p


def test_check_still_reaches_several_tiles_and_past_a_tile() -> None:
    """Stepped sizes still give a size past 128 that is not a multiple of 128 (ragged against
    the NKI tile), and an edge of one block instead of 1."""
    b, _ = binding_from_inference(parse_source(_stencil("dim3-locals"), "s.cu"), "smooth")
    assert b is not None
    gen = [p.values for p in points_of(b) if p.generated]
    assert any(int(v["rows"]) > 128 and int(v["rows"]) % 128 for v in gen), gen
    assert any(int(v["rows"]) == 16 or int(v["cols"]) == 16 for v in gen), gen
    assert len({tuple(sorted(v.items())) for v in gen}) == len(gen)


def test_rounded_up_grid_without_guard_and_whole_host_size() -> None:
    for launch in ("(n + 127) / 128, 128", "ceil_div(n, 128), 128"):
        src = f"""
__device__ int ceil_div(int a, int b) {{ return (a + b - 1) / b; }}
__global__ void twice(float *y, const float *x, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = 2.0f * x[i];
}}
int main() {{
  int n = 1 << 12;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&y, n * sizeof(float));
  twice<<<{launch}>>>(y, x, n);
}}"""
        partial, diags = infer_binding(parse_source(src, "up.cu"), "twice")
        assert partial["check"]["multiples"] == {"n": 128}, launch
        assert any("no guard" in d.message for d in diags)


@pytest.mark.parametrize(
    "body",
    [
        "if (i < n) y[i] = 2.0f * x[i];",  # a guard: ragged sizes are fine
        "for (; i < n; i += gridDim.x * blockDim.x) y[i] = 2.0f * x[i];",  # grid-stride
    ],
)
def test_guarded_kernels_keep_ragged_sizes(body: str) -> None:
    src = f"""
__global__ void twice(float *y, const float *x, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  {body}
}}
int main() {{
  int n = 4096;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&y, n * sizeof(float));
  twice<<<(n + 255) / 256, 256>>>(y, x, n);
}}"""
    partial, _ = infer_binding(parse_source(src, "g.cu"), "twice")
    assert "check" not in partial


def test_unguarded_host_size_not_whole_blocks_gives_no_step() -> None:
    steps = size_steps(["ceil_div(n, 256)"], (256, 1, 1), {"n"}, {0}, {"n": 1000})
    assert steps == []
    assert [s.step for s in size_steps(["(n / 64)"], (64, 1, 1), {"n"}, set(), {})] == [64]
    assert size_steps(["n / 1"], (1, 1, 1), {"n"}, set(), {}) == []
    assert size_steps(["max(n, 4) / 4"], (4, 1, 1), {"n"}, set(), {}) == []


def test_bind_writes_the_multiples_table() -> None:
    kt = kernel_toml(parse_source(_stencil("inline-dim3"), "k.cu"), "smooth")
    assert "[kernels.smooth.check.multiples]\ncols = 16\nrows = 16" in kt.text


def test_sidecar_multiples_validate() -> None:
    base = {
        "launch": {"grid": ["n / 32"], "block": [32]},
        "params": {"y": {"shape": ["n"], "dtype": "float32", "role": "out"}, "n": 64},
    }
    assert binding_from_dict({**base, "check": {"multiples": {"n": 32}}}).multiples == (("n", 32),)
    for bad in ({"m": 32}, {"n": 0}, {"n": 2.5}, 7):
        with pytest.raises(DiagnosticError):
            binding_from_dict({**base, "check": {"multiples": bad}})


UNGUARDED = """
__global__ void triple(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = 3.0f * x[i];
}
int main() {
  int n = 2048;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&y, n * sizeof(float));
  triple<<<(n + 127) / 128, 128>>>(y, x, n);
}
"""
TRIPLE_PORT = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def triple(x):
    (n,) = x.shape
    y = nl.ndarray((n,), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in range(n // 128):
        a = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x[128 * t:128 * t + 128].reshape((128, 1)))
        b = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=b, data=a, op0=nl.multiply, operand0=3.0)
        nisa.dma_copy(dst=y[128 * t:128 * t + 128].reshape((128, 1)), src=b)
    return y
"""


def test_check_runs_its_generated_points_at_whole_blocks(tmp_path) -> None:
    """Without the step, every generated size (n + 1, 1, ...) made the unguarded CUDA kernel read
    out of bounds and was dropped: only the host's size was ever compared."""
    from cuda2nki.fidelity.check import check

    (tmp_path / "k.cu").write_text(UNGUARDED)
    (tmp_path / "p.py").write_text(TRIPLE_PORT)
    rep = check(tmp_path / "k.cu", tmp_path / "p.py", seeds=1)
    assert all(n["classification"] == "expected" for n in rep.numerics), rep.numerics
    sizes = {int(n["shape"].split("n=")[1]) for n in rep.numerics}
    assert len(sizes) >= 2 and all(s % 128 == 0 for s in sizes), sizes
    assert any(d.code == "C2N4028" for d in rep.findings)


@pytest.mark.parametrize(
    "grid",
    ["(((n) + (128) - 1) / (128))", "(n - 1 + 128) / 128", "((n + 128) - 1) / 128"],
)
def test_rounded_up_grid_however_spelled(grid: str) -> None:
    steps = size_steps([grid], (128, 1, 1), {"n"}, {0}, {"n": 4096})
    assert [(s.name, s.step) for s in steps] == [("n", 128)]
    assert size_steps([grid.replace("n", "2 * n")], (128, 1, 1), {"n"}, {0}, {}) == []


# A block computes a TR x TC tile with fewer threads than elements, walking its rows with
# pointers it advances: the index expressions (not the executed thread) show that no guard
# bounds the block indices, so the sizes come in whole tiles whatever the block's thread count.
TILED = """
{macro}
template <int TR, int TC>
__global__ void scale_tiles(int {h}, int {w}, float s, const float *src, float *dst) {{
  const int lane = threadIdx.x % TC;
  const int first = threadIdx.x / TC;
  src += (blockIdx.y * TR + first) * {w} + blockIdx.x * TC;
  dst += (blockIdx.y * TR + first) * {w} + blockIdx.x * TC;
  for (int r = first; r < TR; r += blockDim.x / TC) {{
    dst[lane] = s * src[lane];
    src += (blockDim.x / TC) * {w};
    dst += (blockDim.x / TC) * {w};
  }}
}}
void run(int {h}, int {w}, const float *a, float *b) {{
  {launch}
}}
"""
TILED_LAUNCHES = {
    "macro-dim3": (
        "#define DIVUP(a, b) (((a) + (b)-1) / (b))",
        "dim3 grid(DIVUP({w}, {tc}), DIVUP({h}, {tr}));\n"
        "  scale_tiles<{tr}, {tc}><<<grid, {threads}>>>({h}, {w}, 2.0f, a, b);",
    ),
    "constants": (
        "#define TILE_ROWS {tr}\n#define TILE_COLS {tc}",
        "dim3 grid(({w} + TILE_COLS - 1) / TILE_COLS, ({h} + TILE_ROWS - 1) / TILE_ROWS);\n"
        "  scale_tiles<TILE_ROWS, TILE_COLS><<<grid, dim3({threads})>>>({h}, {w}, 2.0f, a, b);",
    ),
    "locals": (
        "",
        "const int br = {tr}, bc = {tc};\n"
        "  dim3 blocks(({w} + bc - 1) / bc, ({h} + br - 1) / br);\n"
        "  dim3 threads({threads});\n"
        "  scale_tiles<{tr}, {tc}><<<blocks, threads>>>({h}, {w}, 2.0f, a, b);",
    ),
}


@pytest.mark.parametrize("launch", sorted(TILED_LAUNCHES))
@pytest.mark.parametrize(
    ("tr", "tc", "threads", "h", "w"), [(16, 32, 128, "rows", "cols"), (8, 64, 256, "m", "n")]
)
def test_unguarded_block_tiles_make_sizes_whole_tiles(
    launch: str, tr: int, tc: int, threads: int, h: str, w: str
) -> None:
    """A sgemm-style tile per block with no guard: a size halved below a tile, or a ragged
    check point, made the CUDA kernel itself read out of bounds."""
    macro, text = TILED_LAUNCHES[launch]
    fmt = {"tr": tr, "tc": tc, "threads": threads, "h": h, "w": w}
    src = TILED.format(macro=macro.format(**fmt), h=h, w=w, launch=text.format(**fmt))
    partial, diags = infer_binding(parse_source(src, "tiles.cu"), "scale_tiles")
    assert partial["check"]["multiples"] == {w: tc, h: tr}, partial
    notes = [d.message for d in diags if "whole" in d.message and "blocks" in d.message]
    assert len(notes) == 2, notes
