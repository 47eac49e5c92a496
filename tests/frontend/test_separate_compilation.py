"""Device functions declared in a file and defined in another source file next to it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

MAIN = """#include <cuda_runtime.h>
{proto}
__global__ void apply(const float* xs, float* ys, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) ys[i] = {call};
}}
"""

# (prototype in main.cu, call, {file: text}, NumPy of xs)
LAYOUTS = {
    "one_file": (
        "__device__ float warp_it(float x);",
        "warp_it(xs[i])",
        {
            "warp.cu": "#define GAIN 3.0f\n"
            "static __device__ float bias(float x) { return x - 1.0f; }\n"
            "__device__ float warp_it(float x) { return GAIN * bias(x); }\n"
        },
        lambda x: 3 * (x - 1),
    ),
    "chain_of_files": (
        "__host__ __device__ float outer_fn(float);",
        "outer_fn(xs[i]) + 1.0f",
        {
            "outer.cu": "__host__ __device__ float inner_fn(float v);\n"
            "__host__ __device__ float outer_fn(float v) { return inner_fn(v * 2.0f); }\n",
            "inner.cu": 'extern "C" __host__ __device__\n'
            "float inner_fn(float v) { return v * v; }\n",
        },
        lambda x: (2 * x) ** 2 + 1,
    ),
    "constant_table": (
        "extern __device__ float pick(int k);",
        "pick(i % 4) * xs[i]",
        {
            "tables.cu": "__constant__ float weights[4] = {0.5f, 1.0f, 2.0f, 4.0f};\n"
            "__device__ float unused_elsewhere(float q) { return q; }\n"
            "__device__ float pick(int k) { return weights[k]; }\n"
        },
        lambda x: np.array([0.5, 1, 2, 4] * 2, np.float32) * x,
    ),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_definition_found_next_to_the_file(tmp_path: Path, layout: str) -> None:
    proto, call, others, want = LAYOUTS[layout]
    (tmp_path / "main.cu").write_text(MAIN.format(proto=proto, call=call))
    for name, text in others.items():
        (tmp_path / name).write_text(text)
    tu = parse_file(tmp_path / "main.cu")
    assert tu.rejected == {}, tu.diagnostics
    notes = [d for d in tu.diagnostics if d.code == "C2N1007"]
    assert notes and all(Path(d.loc.file).name in others for d in notes)
    xs = np.arange(8, dtype=np.float32) - 2.5
    got = run_kernel(
        tu, "apply", grid=(2,), block=(4,), args={"xs": xs, "ys": np.zeros(8, np.float32), "n": 8}
    )["ys"]
    np.testing.assert_allclose(got, want(xs).astype(np.float32), rtol=1e-6)


def test_an_error_in_the_linked_definition_points_into_its_file(tmp_path: Path) -> None:
    (tmp_path / "main.cu").write_text(
        MAIN.format(proto="__device__ float f(float);", call="f(xs[i])")
    )
    (tmp_path / "f.cu").write_text("\n\n__device__ float f(float x) { return x + nowhere; }\n")
    tu = parse_file(tmp_path / "main.cu")
    (d,) = tu.rejected["apply"]
    assert d.code == "C2N1020" and Path(d.loc.file).name == "f.cu" and d.loc.line == 3


@pytest.mark.parametrize(
    "other",
    [
        "__global__ void f(float x) { }\n",  # a kernel of that name is never linked
        "__device__ float g(float x) { return x; }\n",  # no definition of f anywhere
    ],
)
def test_no_definition_stays_an_unknown_function(tmp_path: Path, other: str) -> None:
    (tmp_path / "main.cu").write_text(
        MAIN.format(proto="__device__ float f(float);", call="f(xs[i])")
    )
    (tmp_path / "other.cu").write_text(other)
    tu = parse_file(tmp_path / "main.cu")
    assert [d.code for d in tu.rejected["apply"]] == ["C2N1021"]
    assert not any(d.code == "C2N1007" for d in tu.diagnostics)


def test_an_undeclared_call_is_not_linked(tmp_path: Path) -> None:
    (tmp_path / "main.cu").write_text(MAIN.format(proto="", call="f(xs[i])"))
    (tmp_path / "f.cu").write_text("__device__ float f(float x) { return x; }\n")
    tu = parse_file(tmp_path / "main.cu")
    assert [d.code for d in tu.rejected["apply"]] == ["C2N1021"]
