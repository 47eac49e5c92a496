"""Variable templates in device memory (``template <typename T> __constant__ T mask[W];``):
each instantiation a global of its own, a host-filled ``__constant__`` one an input."""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.globaltemplates import SEP, template_of
from cuda2nki.simt import run_kernel

_HOST_FILLED = """\
#define W 9
template <typename T>
__constant__ T taps [W];

template <typename T>
__global__ void fir(const T* __restrict__ x, T* __restrict__ y, int n, int width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T acc = 0;
    for (int j = 0; j < width; j++)
        if (i + j < n) acc += x[i + j] * taps<T>[j];
    y[i] = acc;
}

template <typename T>
void run(const T* x, T* y, int n, int width, const T* h) {
    cudaMemcpyToSymbol(taps<T>, h, width * sizeof(T));
    fir<T><<<(n + 127) / 128, 128>>>(x, y, n, width);
}

int main() {
    float *xf, *yf, *hf; double *xd, *yd, *hd;
    run<double>(xd, yd, 1000, 5, hd);
    run<float>(xf, yf, 1000, 5, hf);
}
"""


def test_host_filled_instances_become_inputs(parse):
    tu = parse(_HOST_FILLED)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    elem = k.params[0].ty.pointee.name  # the instance the kernel was lowered under
    tname = k.params[-1].name
    assert tname == f"taps{SEP}{elem}" and template_of(tname) == "taps"
    assert not any(template_of(g.name) == "taps" for g in tu.globals)  # an input now
    x = np.arange(40, dtype=np.float64 if elem == "float64" else np.float32)
    h = np.array([1, 2, 3, 0, 0, 0, 0, 0, 0], x.dtype)
    args = {"x": x, "y": np.zeros_like(x), "n": 40, "width": 3, tname: h}
    got = run_kernel(tu, k.name, grid=(1,), block=(128,), args=args)
    want = [sum(x[i + j] * h[j] for j in range(3) if i + j < 40) for i in range(40)]
    np.testing.assert_allclose(got["y"], want)


def test_initialised_device_table_of_two_parameters(parse):
    tu = parse("""\
template <typename T, int N>
__device__ T lut[N] = {T(1), T(2), T(4), T(8)};

__global__ void scale(float* out, const int* v, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = lut<float, 4>[v[i] & 3] + lut<int, 4>[3 - (v[i] & 3)];
}
""")
    assert tu.rejected == {}, tu.diagnostics
    names = {g.name for g in tu.globals}
    assert {f"lut{SEP}float32_4", f"lut{SEP}int32_4"} <= names
    for g in tu.globals:  # `T(1)` under T = float: a number a port can hold as a constant
        assert all(isinstance(x, (A.FloatLit, A.IntLit)) for x in g.init.items), g.init
    v = np.arange(16, dtype=np.int32)
    got = run_kernel(
        tu,
        "scale",
        grid=(1,),
        block=(32,),
        args={"out": np.zeros(16, np.float32), "v": v, "n": 16},
    )
    table = np.array([1, 2, 4, 8], np.float32)
    np.testing.assert_allclose(got["out"], table[v & 3] + table[3 - (v & 3)])


def test_a_template_kernel_not_instantiated_keeps_the_use(parse):
    tu = parse("""\
template <class T> __constant__ T coef[4];
template <class T>
__global__ void k(T* y, int n) {
    int i = threadIdx.x;
    if (i < n) y[i] = coef<T>[i & 3];
}
template <class T> void go(T* y, int n) { k<T><<<1, 64>>>(y, n); }
""")
    assert "k" not in tu.rejected, tu.diagnostics


def test_a_struct_typed_template_global_is_still_refused(parse):
    tu = parse("""\
struct P { float a; int b; };
template <class T> __constant__ T params[2];
__global__ void k(float* y) { y[threadIdx.x] = params<P>[0].a; }
int main() { float* y; k<<<1, 32>>>(y); }
""")
    assert "k" in tu.rejected
    assert any(isinstance(d.code, str) and d.code.startswith("C2N10") for d in tu.rejected["k"])
    assert not any(isinstance(g.ty, A.ArrayType) and "params" in g.name for g in tu.globals)
