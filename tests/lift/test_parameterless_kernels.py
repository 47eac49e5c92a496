"""A kernel without parameters (a greeting that only prints, a launch-geometry demo) has an
empty binding: its launch and no parameter.  An empty ``[params]`` table validates for such a
kernel only; the kernel is then refused for writing no global memory (nothing to port)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.binding import binding_from_dict, binding_problems
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNELS = {
    "greeting": """
#include <cstdio>
__global__ void greet() { printf("block %d thread %d\\n", blockIdx.x, threadIdx.x); }
int main() { greet<<<3, 4>>>(); cudaDeviceSynchronize(); return 0; }
""",
    "void_list_dim3": """
#include <stdio.h>
__global__ void where_am_i(void) {
    int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) printf("%d %d %d\\n", blockIdx.x, blockIdx.y, warp);
}
int main() {
    dim3 threads(64, 1);
    dim3 blocks(2, 2);
    where_am_i<<<blocks, threads>>>();
    return 0;
}
""",
    "launcher_with_macros": """
#include <cstdio>
#define NB 5
#define NT 96
__global__ void ping() { if (threadIdx.x == 0) printf("ping from %u\\n", blockIdx.x); }
void run_ping() { ping<<<NB, NT>>>(); }
int main() { run_ping(); return 0; }
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_inference_binds_a_kernel_without_parameters(name: str) -> None:
    tu = parse_source(KERNELS[name], f"{name}.cu")
    (fn,) = tu.kernels
    bnd, diags = binding_from_inference(tu, fn.name)
    assert bnd is not None, [d.message for d in diags]
    assert not bnd.tensors and not bnd.scalars


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_kernel_without_parameters_is_bound_then_refused_for_writing_nothing(
    tmp_path: Path, name: str
) -> None:
    """The binding is complete; what stops the port is that the kernel writes no global memory
    (device printf is not ported), said in so many words -- never a port that computes
    nothing and a check that compares nothing."""
    cu = tmp_path / f"{name}.cu"
    cu.write_text(KERNELS[name])
    res = api.port(str(cu))
    assert res.source is None
    codes = {d.code for d in res.diagnostics}
    assert "C2N2502" not in codes, [d.message for d in res.diagnostics]
    refusals = [d for d in res.diagnostics if d.code == "C2N2301"]
    assert refusals and "writes no global memory" in refusals[0].message


def test_an_empty_params_table_binds_no_parameter() -> None:
    empty = {"launch": {"grid": [2], "block": [32]}, "params": {}}
    bnd = binding_from_dict(empty)
    assert binding_problems(bnd, "k", []) == []
    # a kernel that has parameters still needs them bound
    problems = binding_problems(bnd, "k", [("y", True), ("n", False)])
    assert any("'n'" in p for p in problems), problems
    with pytest.raises(Exception, match=r"missing \[params\] table"):
        binding_from_dict({"launch": {"grid": [2], "block": [32]}})
