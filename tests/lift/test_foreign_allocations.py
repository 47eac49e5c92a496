"""Allocations in another file of the tree: a launcher defined beside its kernels, called from a
``main`` in another file that allocates the buffers.  The pointer a kernel indexes only through
offsets that nothing bounds (a blocked matrix walked by a row parameter) takes the allocation's
extent, in the kernel's size parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.lift.infer import binding_from_inference

#: a diagonal-block factorisation step: ``mat`` is walked from ``step``, never bounded
KERNELS = """#define TILE 16
__global__ void diag_step(float* mat, int width, int step) {
    __shared__ float blk[TILE][TILE];
    int base = step * width + step;
    for (int r = 0; r < TILE; r++) {
        blk[r][threadIdx.x] = mat[base + threadIdx.x];
        base += width;
    }
    __syncthreads();
    float pivot = blk[0][0];
    base = (step + 1) * width + step;
    for (int r = 1; r < TILE; r++) {
        mat[base + threadIdx.x] = blk[r][threadIdx.x] / pivot;
        base += width;
    }
}
void factor(float* mat, int width) {
    int s = 0;
    for (s = 0; s < width - TILE; s += TILE)
        diag_step<<<1, TILE>>>(mat, width, s);
}
"""

#: the caller, in its own file, spelled several ways
MAINS = {
    "cudaMalloc-void-star-star": """
void factor(float* mat, int width);
int main() {
    int n = 64;
    float* d_mat;
    cudaMalloc((void**)&d_mat, n * n * sizeof(float));
    factor(d_mat, n);
    return 0;
}""",
    "checked-bytes-local": """
#define CHECK(x) x
void factor(float* mat, int width);
int main(int argc, char** argv) {
    const int dim = 48;
    size_t bytes = sizeof(float) * dim * dim;
    float* buf = 0;
    CHECK(cudaMalloc(&buf, bytes));
    factor(buf, dim);
    return 0;
}""",
    "managed-through-a-second-launcher": """
void factor(float* mat, int width);
static void run(float* m, int w) { factor(m, w); }
int main() {
    int side = 32;
    float* a;
    cudaMallocManaged(&a, side * side * sizeof(float));
    run(a, side);
    return 0;
}""",
}


@pytest.mark.parametrize("spelling", sorted(MAINS))
def test_allocation_in_the_callers_file_sizes_the_pointer(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "steps.cu").write_text(KERNELS)
    (tmp_path / "main.cu").write_text(MAINS[spelling])
    tu = parse_file(tmp_path / "steps.cu")
    bnd, diags = binding_from_inference(tu, "diag_step")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    mat = bnd.tensor("mat")
    assert [str(d).replace(" ", "") for d in mat.shape] == ["width*width"]
    note = next(d for d in diags if "from its allocation" in d.message)
    assert "main.cu:" in note.message  # the evidence cites the allocating file
    # staged into shared memory, then written back: its initial contents are an input
    assert mat.role == "inout"
