"""A kernel that sets a CUDA graph's condition (``cudaGraphSetConditional``): the handle is the
``unsigned long long`` CUDA defines it as, and the kernel's own memory effects run as written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

KERNELS = {
    "countdown": """
__global__ void k(int* counter, cudaGraphConditionalHandle handle) {
    if (--(*counter) == 0) {
        cudaGraphSetConditional(handle, 0);
    }
}
""",
    "odd-test": """
__global__ void k(int* counter, cudaGraphConditionalHandle h) {
    unsigned int value = *counter & 0x01;
    cudaGraphSetConditional(h, value);
    counter[0] = counter[0] - 1;
}
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_graph_conditional_kernel_lowers_and_runs(tmp_path: Path, name: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(KERNELS[name])
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    assert k.params[1].ty == A.ScalarType(name="uint64")
    c = np.array([3], np.int32)
    got = run_kernel(
        tu,
        "k",
        grid=(1,),
        block=(1,),
        args={"counter": c, "handle": np.uint64(7)}
        if name == "countdown"
        else {"counter": c, "h": np.uint64(7)},
    )
    assert got["counter"][0] == 2
