"""A kernel parameter held by value whose struct has an array member (``param_t p`` with
``int param[1024];``): the array is a buffer the kernel reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

CASES = {
    "grid_constant": (
        "typedef struct { int param[N]; } param_t;",
        "__grid_constant__ const param_t p",
        "p.param[i]",
        "p__param",
    ),
    "tagged": (
        "struct Weights { int count; float w[N]; };",
        "struct Weights p",
        "p.w[i] * p.count",
        "p__w",
    ),
    "nested": (
        "struct Inner { int id; float taps[N]; }; struct Outer { int scale; Inner in; };",
        "Outer p",
        "p.in.taps[i] * p.scale",
        "p__in__taps",
    ),
    "two_dims": (
        "struct Table { float m[2][N]; int rows; };",
        "const Table p",
        "p.m[1][i] - p.m[0][i]",
        "p__m",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_array_member_of_a_kernel_parameter(tmp_path: Path, case: str) -> None:
    struct, param, read, leaf = CASES[case]
    path = tmp_path / "k.cu"
    path.write_text(
        f"""#define N 8
{struct}
__global__ void sum_params({param}, float* out) {{
    float acc = 0.0f;
    for (int i = 0; i < N; ++i) acc += {read};
    out[threadIdx.x] = acc;
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    params = {p.name: p.ty for p in tu.kernels[0].params}
    assert isinstance(params[leaf], A.PointerType)
    args: dict[str, object] = {"out": np.zeros(4, np.float32)}
    data = np.arange(16, dtype=np.float32) + 1
    if case == "two_dims":
        args.update({leaf: data, "p__rows": 2})
        want = float((data[8:] - data[:8]).sum())
    else:
        args[leaf] = data[:8] if case != "grid_constant" else data[:8].astype(np.int32)
        scale = 3
        args.update({k: scale for k in params if k.endswith(("count", "scale", "id"))})
        want = float(data[:8].sum()) * (1 if case == "grid_constant" else scale)
    got = run_kernel(tu, "sum_params", grid=(1,), block=(4,), args=args)["out"]
    np.testing.assert_array_equal(got, np.full(4, want, np.float32))


def test_device_function_taking_it_by_value_stays_refused(tmp_path: Path) -> None:
    """A copy passed to a device function may be written there: still refused, with a reason."""
    path = tmp_path / "k.cu"
    path.write_text(
        """struct P { float w[4]; int n; };
__device__ float first(P p) { return p.w[0]; }
__global__ void k(P p, float* out) { out[0] = first(p); }
"""
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1025" and "array member" in ds[0].message


def test_a_copy_of_it_stays_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """struct P { float w[4]; int n; };
__global__ void k(P p, float* out) { P q = p; out[0] = q.w[0]; }
"""
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1025" and ds[0].loc.line == 2
