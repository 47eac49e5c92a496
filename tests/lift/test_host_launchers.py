"""Launcher functions reached in other ways than a plain call: a method of a class
(``op.run(...)``, ``ops[i].run(...)``, ``p->run(...)``) and a function passed as a pointer to a
benchmark harness (``bench(launch, ...)`` calling ``run(...)``), in the file or in another file
of the tree.  Their parameters take the values the callers pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_file, parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

SAXPY = """
__global__ void saxpy_k(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

#: (host, the size its caller passes)
METHODS = {
    "member-of-an-array-of-objects": (
        """
class Worker {
  public:
    void run(float* y, const float* x, int n, int threads);
};
void Worker::run(float* y, const float* x, int n, int threads) {
    dim3 block(threads);
    dim3 grid(n / block.x);
    saxpy_k<<<grid, block, 0, 0>>>(y, x, 2.0f, n);
}
int main() {
    int total = 1 << 12;
    const int parts = 4;
    Worker* w = new Worker[parts];
    float *y, *x;
    for (int i = 0; i < parts; i++) w[i].run(y, x, total / parts, 128);
}""",
        1024,
    ),
    "method-through-a-pointer": (
        """
struct Launcher {
    int bs;
    void go(float* y, const float* x, int len) {
        saxpy_k<<<(len + 255) / 256, 256>>>(y, x, 2.0f, len);
    }
};
int main() {
    Launcher* l = new Launcher();
    float *y, *x;
    l->go(y, x, 3000);
}""",
        3000,
    ),
    "object-method-in-a-namespace": (
        """
namespace app {
struct Op { void launch(float* y, const float* x, int count, float alpha); };
void Op::launch(float* y, const float* x, int count, float alpha) {
    saxpy_k<<<(count + 63) / 64, 64>>>(y, x, alpha, count);
}
}
int main() {
    app::Op op;
    float *y, *x;
    op.launch(y, x, 2048, 0.5f);
}""",
        2048,
    ),
}


@pytest.mark.parametrize("host", sorted(METHODS))
def test_a_method_launcher_takes_its_callers_values(host: str) -> None:
    text, size = METHODS[host]
    tu = parse_source(SAXPY + text, "m.cu")
    partial, diags = infer_binding(tu, "saxpy_k")
    assert "launch" in partial, [d.message for d in diags]
    n = partial["params"]["n"]
    assert n == size
    grid = partial["launch"]["grid"][0]
    assert (eval_c_expr(grid, {"n": n}) if isinstance(grid, str) else grid) >= 1
    assert binding_from_inference(tu, "saxpy_k")[0] is not None


REDUCE = """
__global__ void partial_sum(float* out, const float* in, int size) {
    extern __shared__ float s[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < size ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
int reduce_step(float* out, float* in, int size, int n_threads) {
    int n_blocks = (size + n_threads - 1) / n_threads;
    partial_sum<<<n_blocks, n_threads, n_threads * sizeof(float), 0>>>(out, in, size);
    return n_blocks;
}
"""

#: the harness that calls the launcher through a pointer, with several spellings
HARNESS = {
    "pointer-parameter": """
void run_all(int (*step)(float*, float*, int, int), float* out, float* in, int size, int nt) {
    while (size > 1) size = step(out, in, size, nt);
}
int main() {
    float *o, *i;
    run_all(reduce_step, o, i, 1 << 12, 256);
}""",
    "address-of-and-typedef": """
typedef int (*step_fn)(float*, float*, int, int);
void bench(step_fn fn, float* o, float* i, unsigned int n) {
    for (int r = 0; r < 3; r++) fn(o, i, n, 128);
}
int main() {
    float *o, *i;
    bench(&reduce_step, o, i, 5000);
}""",
}


@pytest.mark.parametrize("host", sorted(HARNESS))
def test_a_launcher_called_through_a_function_pointer(host: str) -> None:
    tu = parse_source(REDUCE + HARNESS[host], "r.cu")
    partial, diags = infer_binding(tu, "partial_sum")
    assert "launch" in partial, [d.message for d in diags]
    assert partial["launch"]["block"][0] in (128, 256)
    assert binding_from_inference(tu, "partial_sum")[0] is not None


def test_a_harness_in_another_file_calls_the_launcher_through_a_pointer(tmp_path: Path) -> None:
    (tmp_path / "reduce.cu").write_text(REDUCE)
    decl = "int reduce_step(float* out, float* in, int size, int n_threads);\n"
    (tmp_path / "main.cpp").write_text(decl + HARNESS["pointer-parameter"])
    tu = parse_file(str(tmp_path / "reduce.cu"))
    partial, diags = infer_binding(tu, "partial_sum")
    assert partial["launch"]["block"] == [256], [d.message for d in diags]
    assert any("main.cpp:" in d.message for d in diags)
