"""A kernel template over a device function (``template <fn_t op>``) whose instances are not
known in its file lowers generically: the call of the parameter is opaque until an instance
names the function; an instance runs the function it names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

PARAMS = {
    "using-alias": ("using fn_t = void (*)(float* p, int i, float a);", "fn_t op"),
    "typedef": ("typedef void (*fn_t)(float*, int, float);", "fn_t op"),
    "spelled-out": ("", "void (*op)(float*, int, float)"),
}
BODY = """
__device__ void scale_at(float* p, int i, float a) {{ p[i] *= a; }}
template <{param}>
__global__ void k(float* p, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) op(p, i, 2.0f);
}}
"""


@pytest.mark.parametrize("spelling", sorted(PARAMS))
def test_uninstantiated_function_template_parameter_lowers(tmp_path: Path, spelling: str) -> None:
    alias, param = PARAMS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(alias + BODY.format(param=param))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    assert [f.name for f in tu.kernels] == ["k"]


@pytest.mark.parametrize("spelling", sorted(PARAMS))
def test_instance_runs_the_function_it_names(tmp_path: Path, spelling: str) -> None:
    alias, param = PARAMS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(
        alias
        + BODY.format(param=param)
        + "void host(float* p, int n) { k<scale_at><<<(n + 31) / 32, 32>>>(p, n); }\n"
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    name = next(f.name for f in tu.kernels if f.name.startswith("k"))
    p = np.arange(40, dtype=np.float32)
    got = run_kernel(tu, name, grid=(2,), block=(32,), args={"p": p.copy(), "n": 40})["p"]
    np.testing.assert_array_equal(got, 2 * p)
