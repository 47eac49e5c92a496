"""Basic kernels lower to the documented AST shapes, with C types and locations."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import FLOAT, INT, UINT
from cuda2nki.frontend.visit import find

VECTOR_ADD = """\
#include <cuda_runtime.h>
__global__ void vector_add(const float* __restrict__ a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def test_elementwise_kernel(parse):
    tu = parse(VECTOR_ADD)
    assert tu.diagnostics == () and tu.rejected == {}
    (k,) = tu.kernels
    assert k.name == "vector_add" and k.kind == "global"
    assert [p.name for p in k.params] == ["a", "b", "c", "n"]
    a = k.params[0].ty
    assert (
        isinstance(a, A.PointerType)
        and a.restrict
        and a.pointee == A.ScalarType(name="float32", const=True)
    )
    assert k.params[3].ty == INT
    decl, if_ = k.body.body
    assert isinstance(decl, A.VarDecl) and decl.name == "i" and decl.ty == INT
    assert decl.init.ty == UINT  # unsigned builtins make the product unsigned
    b = find(decl.init, A.Builtin)
    assert [(x.name, x.dim) for x in b] == [
        ("blockIdx", "x"),
        ("blockDim", "x"),
        ("threadIdx", "x"),
    ]
    assert isinstance(if_, A.If) and if_.cond.ty.name == "bool"
    assign = if_.then.expr
    assert isinstance(assign, A.Assign) and assign.ty == FLOAT
    assert assign.value.ty == FLOAT
    assert (if_.loc.line, if_.loc.col) == (4, 5)
    assert (assign.target.loc.line, assign.target.loc.col) == (4, 16)


def test_shared_memory_loop_and_device_call(parse):
    tu = parse("""\
#define TILE 16
__device__ __forceinline__ float sq(float x) { return x * x; }
__global__ void k(float* out, const float* in, int n) {
    __shared__ float tile[TILE][TILE + 1];
    extern __shared__ float dyn[];
    float acc = 0.0f;
    #pragma unroll
    for (int j = 0; j < TILE; ++j) {
        tile[threadIdx.y][j] = sq(in[j]);
        __syncthreads();
        acc += tile[j][threadIdx.x];
    }
    int t = 0;
    while (t < n) { t += 2; if (t == 5) break; else continue; }
    do { t--; } while (t > 0);
    out[threadIdx.x] = acc + dyn[0];
}
""")
    assert tu.rejected == {}
    sq = tu.function("sq")
    assert sq.kind == "device" and sq.forceinline and sq.return_type == FLOAT
    k = tu.function("k")
    shared, dyn = k.body.body[0], k.body.body[1]
    assert shared.storage == "shared" and shared.ty == A.ArrayType(elem=FLOAT, dims=(16, 17))
    assert dyn.storage == "extern_shared" and dyn.ty == A.ArrayType(elem=FLOAT, dims=(None,))
    (loop,) = find(k, A.For)
    assert loop.unroll == 0
    call = [c for c in find(k, A.Call) if c.func == "sq"][0]
    assert call.target == "sq" and call.ty == FLOAT
    sync = [c for c in find(k, A.Call) if c.func == "__syncthreads"][0]
    assert sync.target is None
    idx = find(loop.body, A.Index)[0]  # tile[threadIdx.y][j]
    assert isinstance(idx.base, A.Index) and idx.ty == FLOAT
    assert idx.base.ty == A.ArrayType(elem=FLOAT, dims=(17,))
    assert find(k, A.While) and find(k, A.DoWhile) and find(k, A.Break) and find(k, A.Continue)
    # the macro-expanded line keeps its original position
    assert (shared.loc.line, shared.loc.col) == (4, 22)
