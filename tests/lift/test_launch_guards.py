"""A launch inside ``if (name == c)`` sees ``name`` as ``c``: the host picks a template
instance by the size it launches with, and each instance gets its own arm's geometry.

The ``<16>`` instance of a tiled matmul launched under ``if (block_size == 16)`` (with
``block_size`` 32 elsewhere) used to get a 32 x 32 block, so the check's CUDA run wrote its
16 x 16 shared tiles out of bounds (C2N1500) and the check ended in an error."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
template <int BS>
__global__ void mm(float *C, const float *A, const float *B, int wA, int wB) {
    __shared__ float As[BS][BS];
    __shared__ float Bs[BS][BS];
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.0f;
    for (int t = 0; t < wA / BS; ++t) {
        As[ty][tx] = A[(by * BS + ty) * wA + t * BS + tx];
        Bs[ty][tx] = B[(t * BS + ty) * wB + bx * BS + tx];
        __syncthreads();
        for (int k = 0; k < BS; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[(by * BS + ty) * wB + bx * BS + tx] = acc;
}
"""

HOST = """
int run(int wA, int hA, int wB, bool fast) {
    int block_size = 32;
    float *A, *B, *C;
    cudaMalloc(&A, wA * hA * sizeof(float)); cudaMalloc(&B, wA * wB * sizeof(float));
    cudaMalloc(&C, hA * wB * sizeof(float));
    dim3 threads(block_size, block_size);
    dim3 grid(wB / threads.x, hA / threads.y);
    LAUNCHES
    return 0;
}
int main() { return run(256, 256, 256, true); }
"""

SPELLINGS = {
    "braced_if_else": "if (block_size == 16) {\n mm<16><<<grid, threads>>>(C, A, B, wA, wB);\n"
    "} else {\n mm<32><<<grid, threads>>>(C, A, B, wA, wB);\n}",
    "constant_first_unbraced": "if (16 == block_size) mm<16><<<grid, threads>>>(C, A, B, wA, wB);\n"
    "else mm<32><<<grid, threads>>>(C, A, B, wA, wB);",
    "inside_an_and_chain": "if (fast && (block_size == 16)) {\n"
    " mm<16><<<grid, threads>>>(C, A, B, wA, wB);\n}\n"
    "if (block_size != 16) mm<32><<<grid, threads>>>(C, A, B, wA, wB);",
    "else_if_chain": "if (block_size == 8) mm<8><<<grid, threads>>>(C, A, B, wA, wB);\n"
    "else if (block_size == 16) mm<16><<<grid, threads>>>(C, A, B, wA, wB);\n"
    "else mm<32><<<grid, threads>>>(C, A, B, wA, wB);",
}


def _launches(spelling: str) -> dict[str, dict]:
    tu = parse_source(KERNEL + HOST.replace("LAUNCHES", SPELLINGS[spelling]), "mm.cu")
    out = {}
    for k in tu.kernels:
        partial, diags = infer_binding(tu, k.name)
        out[k.name] = (partial.get("launch"), diags)
    return out


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_each_instance_gets_its_arms_block(spelling: str) -> None:
    got = _launches(spelling)
    for name, (launch, diags) in got.items():
        bs = int(name.split("<")[1].rstrip(">"))
        assert launch is not None, (name, [d.message for d in diags])
        assert launch["block"] == [bs, bs], (name, launch)
        assert launch["grid"][1] == 256 // bs, (name, launch)
        if bs != 32:  # the arm's test is the evidence
            note = next(d.message for d in diags if "inferred launch" in d.message)
            assert f"'block_size' is {bs} where the launch runs" in note


def test_an_else_arm_fixes_nothing() -> None:
    launch, _ = _launches("braced_if_else")["mm<32>"]
    assert launch["block"] == [32, 32]  # the variable's own value


def test_an_inequality_fixes_nothing() -> None:
    src = KERNEL + HOST.replace(
        "LAUNCHES", "if (block_size >= 16) mm<32><<<grid, threads>>>(C, A, B, wA, wB);"
    )
    tu = parse_source(src, "mm.cu")
    partial, _ = infer_binding(tu, tu.kernels[0].name)  # the one instance
    assert partial["launch"]["block"] == [32, 32]
