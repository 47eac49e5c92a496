"""Stencils over one flat index whose neighbour reads each sit under their own guard
(``col > 0 ? u[k - 1] : b``, ``row + 1 < h ? u[k + w] : b``): the port fetches each neighbour
only inside the tensor -- the first rows' reads before its start and the last rows' reads
past its end are zero-filled, and the guard picks the boundary value there.  Spellings: a heat
step with ``%``/``/`` guards, a 5-point Laplacian with a boundary value on a rectangle (if/else
and a grid-stride loop), equality guards after an early exit, a column-major grid, and an
upwind 1-D step with one-sided guards."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, run_against_simt, tensor_param

HEAT = """
__global__ void heat_step(const int n, const float r, const float r2,
                          const float* __restrict__ u, float* __restrict__ v) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n * n) {
        int a = idx % n;
        int b = idx / n;
        v[a + b * n] = r2 * u[a + b * n] +
            r * ((a < n - 1) ? u[a + 1 + b * n] : 0.0f) +
            r * ((a > 0) ? u[a - 1 + b * n] : 0.0f) +
            r * ((b < n - 1) ? u[a + (b + 1) * n] : 0.0f) +
            r * ((b > 0) ? u[a + (b - 1) * n] : 0.0f);
    }
}
"""

LAPLACE = """
__global__ void laplace5(const float* grid, float* lap, int h, int w, float edge) {
    int k = threadIdx.x + blockIdx.x * blockDim.x;
    if (k >= w * h) return;
    int col = k % w;
    int row = k / w;
    float c = grid[k];
    float west = edge, east = edge, north = edge, south = edge;
    if (col > 0) west = grid[k - 1];
    if (col + 1 < w) east = grid[k + 1];
    if (row > 0) north = grid[k - w];
    if (row + 1 < h) south = grid[k + w];
    lap[k] = west + east + north + south - 4.0f * c;
}
"""

LAPLACE_STRIDE = """
__global__ void laplace_gs(const float* src, float* dst, int h, int w, float edge) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < h * w; k += blockDim.x * gridDim.x) {
        int x = k % w, y = k / w;
        float s = (y >= 1 ? src[k - w] : edge) + (y <= h - 2 ? src[k + w] : edge);
        s += (x != 0 ? src[k - 1] : edge) + (x != w - 1 ? src[k + 1] : edge);
        dst[k] = 0.25f * s;
    }
}
"""

EDGE_TESTS = """
__global__ void smooth_eq(const float* u, float* v, int n, float edge) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n * n) return;
    int c = g % n, r = g / n;
    float west = c == 0 ? edge : u[r * n + c - 1];
    float east = c == n - 1 ? edge : u[r * n + c + 1];
    float north = r == 0 ? edge : u[(r - 1) * n + c];
    float south = r == n - 1 ? edge : u[(r + 1) * n + c];
    v[r * n + c] = 0.25f * (west + east + north + south);
}
"""

COLUMN_MAJOR = """
__global__ void diffuse_cm(const float* p, float* q, int nx, int ny, float nu) {
    int t = blockDim.x * blockIdx.x + threadIdx.x;
    if (t < nx * ny) {
        int iy = t % ny;
        int ix = t / ny;
        float lo_y = iy > 0 ? p[ix * ny + iy - 1] : 1.0f;
        float hi_y = iy < ny - 1 ? p[ix * ny + iy + 1] : 1.0f;
        float lo_x = ix > 0 ? p[(ix - 1) * ny + iy] : 1.0f;
        float hi_x = ix < nx - 1 ? p[(ix + 1) * ny + iy] : 1.0f;
        q[ix * ny + iy] = p[ix * ny + iy] + nu * (lo_y + hi_y + lo_x + hi_x);
    }
}
"""

UPWIND = """
__global__ void upwind(const float* c, float* c_next, int m, float courant, float inflow) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) {
        %s
    }
}
"""

UPWIND_BODIES = {
    "eq-zero": "float left = (j == 0) ? inflow : c[j - 1];\n"
    "        float left2 = (j >= 2) ? c[j - 2] : inflow;\n"
    "        c_next[j] = c[j] - courant * (1.5f * c[j] - 2.0f * left + 0.5f * left2);",
    "lt-swapped": "float w = j < 1 ? inflow : c[j - 1];\n"
    "        c_next[j] = c[j] - courant * (c[j] - w);",
    "downwind": "float e = (j + 1 < m) ? c[j + 1] : inflow;\n"
    "        float e2 = (j > m - 3) ? inflow : c[j + 2];\n"
    "        c_next[j] = c[j] + courant * (e - c[j]) + 0.1f * e2;",
}


def _check(tmp_path: Path, name: str, src: str, kernel: str, params, grid, points, block):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    bdict = grid_binding(grid, params, points, block=block)
    binding = binding_from_dict({"kernel": kernel, **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target="nki")
    assert res.source is not None and not res.literal, [d.render() for d in res.diagnostics]
    port = tmp_path / f"{name}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=points, rtol=1e-5, atol=1e-5)
    assert not run.mismatches, run.mismatches


@pytest.mark.parametrize("block", [256, 128])
def test_heat_step_on_a_flat_index(block: int, tmp_path: Path) -> None:
    params = {
        "u": tensor_param(["n * n"], "in"),
        "v": tensor_param(["n * n"], "out"),
        "n": 37,
        "r": 0.1,
        "r2": 0.6,
    }
    points = [{"n": 37}, {"n": 130}, {"n": 8}]
    grid = [f"ceil_div(n * n, {block})"]
    _check(tmp_path, "heat", HEAT, "heat_step", params, grid, points, block)


@pytest.mark.parametrize(
    ("name", "src", "kernel"),
    [("laplace", LAPLACE, "laplace5"), ("laplace_gs", LAPLACE_STRIDE, "laplace_gs")],
)
def test_laplacian_with_a_boundary_value(name: str, src: str, kernel: str, tmp_path: Path):
    params = {
        "grid" if kernel == "laplace5" else "src": tensor_param(["h * w"], "in"),
        "lap" if kernel == "laplace5" else "dst": tensor_param(["h * w"], "out"),
        "h": 29,
        "w": 45,
        "edge": 2.0,
    }
    points = [{"h": 29, "w": 45}, {"h": 131, "w": 3}, {"h": 1, "w": 50}]
    _check(tmp_path, name, src, kernel, params, ["ceil_div(h * w, 128)"], points, 128)


def test_equality_guards_with_an_early_exit(tmp_path: Path) -> None:
    params = {
        "u": tensor_param(["n * n"], "in"),
        "v": tensor_param(["n * n"], "out"),
        "n": 37,
        "edge": 2.0,
    }
    points = [{"n": 37}, {"n": 130}, {"n": 5}]
    grid = ["ceil_div(n * n, 128)"]
    _check(tmp_path, "edge_eq", EDGE_TESTS, "smooth_eq", params, grid, points, 128)


def test_column_major_diffusion(tmp_path: Path) -> None:
    params = {
        "p": tensor_param(["nx * ny"], "in"),
        "q": tensor_param(["nx * ny"], "out"),
        "nx": 20,
        "ny": 33,
        "nu": 0.2,
    }
    points = [{"nx": 20, "ny": 33}, {"nx": 129, "ny": 5}]
    _check(
        tmp_path, "cm", COLUMN_MAJOR, "diffuse_cm", params, ["ceil_div(nx * ny, 64)"], points, 64
    )


@pytest.mark.parametrize("name", sorted(UPWIND_BODIES))
def test_upwind_step_with_one_sided_guards(name: str, tmp_path: Path) -> None:
    params = {
        "c": tensor_param(["m"], "in"),
        "c_next": tensor_param(["m"], "out"),
        "m": 1000,
        "courant": 0.3,
        "inflow": 1.0,
    }
    points = [{"m": 1000}, {"m": 129}, {"m": 1}, {"m": 65536 + 515}]
    src = UPWIND % UPWIND_BODIES[name]
    _check(tmp_path, name, src, "upwind", params, ["ceil_div(m, 128)"], points, 128)
