"""Template instantiation (launch sites, --template, defaults) and host launch sites."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import FLOAT, INT
from cuda2nki.frontend.visit import find

TEMPLATED = """\
template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) scale(T* out, const T* in, T s, int n) {
    __shared__ T buf[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) { buf[threadIdx.x] = in[i] * s; out[i] = buf[threadIdx.x]; }
}
"""


def test_uninstantiated_template_kernel_is_kept_with_a_note():
    """As written (the lowering alone, before arguments are assumed for it)."""
    from cuda2nki.frontend.driver import lower_source

    tu = lower_source(TEMPLATED, "k.cu")
    (k,) = tu.kernels
    assert [(p.name, p.kind) for p in k.template_params] == [("BLOCK", "int"), ("T", "typename")]
    assert k.template_args == ()
    assert [(d.code, d.loc.line) for d in tu.diagnostics] == [("C2N1023", 2)]
    assert isinstance(k.params[0].ty.pointee, A.OpaqueType)
    assert tu.rejected == {}


def test_instantiated_from_launch_site(parse):
    tu = parse(
        TEMPLATED
        + """\
void run(float* o, const float* x, int n) {
    constexpr int BS = 256;
    scale<BS, float><<<(n + BS - 1) / BS, BS>>>(o, x, 2.0f, n);
    scale<64, double><<<1, 64>>>((double*)o, (const double*)x, 2.0, n);
}
"""
    )
    ks = tu.kernels
    assert [k.template_args for k in ks] == [
        (("BLOCK", 256), ("T", FLOAT)),
        (("BLOCK", 64), ("T", A.ScalarType(name="float64"))),
    ]
    assert [k.name for k in ks] == ["scale<256, float32>", "scale<64, float64>"]
    k = ks[0]
    assert k.template_params == () and k.launch_bounds == (256,)
    assert k.params[0].ty == A.PointerType(pointee=FLOAT)
    buf = k.body.body[0]
    assert buf.ty == A.ArrayType(elem=FLOAT, dims=(256,))
    lit = [x for x in find(k.body.body[1], A.IntLit) if x.value == 256]
    assert lit and lit[0].loc.line == 4  # the substituted parameter keeps its use's location
    assert [s.kernel for s in tu.launch_sites] == ["scale", "scale"]


def test_instantiated_from_template_option_with_default(parse):
    src = TEMPLATED.replace("typename T>", "typename T = float>")
    tu = parse(src, templates={"BLOCK": "128"})
    (k,) = tu.kernels
    assert k.template_args == (("BLOCK", 128), ("T", FLOAT))
    tu = parse(TEMPLATED, templates={"BLOCK": "32", "T": "__half"})
    assert tu.kernels[0].template_args == (("BLOCK", 32), ("T", A.ScalarType(name="float16")))


def test_bad_template_value_is_reported(parse):
    tu = parse(TEMPLATED, templates={"BLOCK": "float", "T": "float"})
    assert any(d.code == "C2N1024" for d in tu.diagnostics)
    assert tu.kernels[0].template_params  # left uninstantiated


def test_device_function_templates_instantiated_per_call(parse):
    tu = parse("""\
template <typename T, int W = 32>
__device__ T warp_sum(T v) {
    for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__global__ void k(float* p, int* q) {
    p[0] = warp_sum(p[0]);
    q[0] = warp_sum<int, 16>(q[0]);
}
""")
    assert tu.rejected == {}
    names = sorted(f.name for f in tu.functions if f.kind == "device")
    assert names == ["warp_sum<float32, 32>", "warp_sum<int32, 16>"]
    calls = [c for c in find(tu.kernels[0], A.Call) if c.func == "warp_sum"]
    assert [(c.target, c.ty) for c in calls] == [
        ("warp_sum<float32, 32>", FLOAT),
        ("warp_sum<int32, 16>", INT),
    ]
    inst = tu.function("warp_sum<int32, 16>")
    assert inst.template_args == (("T", INT), ("W", 16))


LAUNCH = """\
__global__ void k(float* a, int n, int m) { a[0] = n + m; }
#define THREADS 256
void host(float* a, int n, int m, cudaStream_t st) {
    dim3 block(16, 16);
    dim3 grid((n + 15) / 16, (m + 15) / 16);
    k<<<grid, block>>>(a, n, m);
    k<<<dim3(4, 2), THREADS, 1024, st>>>(a, n, m);
    int threads = 128;
    k<<<(n + threads - 1) / threads, threads>>>(a, n, m);
    other<<<1, 1>>>(a);
}
"""


def test_launch_sites_expand_dim3_and_keep_text(parse):
    tu = parse(LAUNCH)
    s1, s2, s3, s4 = tu.launch_sites
    assert s1.kernel == "k" and len(s1.grid) == 2 and len(s1.block) == 2
    assert s1.grid_text == "(n + 15) / 16, (m + 15) / 16" and s1.block_text == "16, 16"
    assert [e.value for e in s1.block] == [16, 16]
    assert isinstance(s1.grid[0], A.Binary) and s1.shared_bytes is None
    assert s1.arg_texts == ("a", "n", "m") and (s1.loc.line, s1.loc.col) == (6, 5)
    assert [e.value for e in s2.grid] == [4, 2] and s2.block[0].value == 256
    assert s2.shared_bytes.value == 1024
    assert s3.grid_text == "(n + threads - 1) / threads" and s3.block_text == "threads"
    assert s4.kernel == "other"
    assert [(d.code, d.loc.line) for d in tu.diagnostics] == [("C2N1027", 10)]


def test_launch_in_broken_host_code_does_not_break_kernels(parse):
    tu = parse(LAUNCH + "void broken() { k<<<1, 1>>>( ; }\n")
    assert len(tu.kernels) == 1 and tu.rejected == {}


def test_launch_chevrons_with_spaces(parse):
    tu = parse(
        "__global__ void k(float* o, int n) { o[0] = n; }\n"
        "void h(float* o, int n) {\n    k << <(n + 31) / 32, 32 >> > (o, n);\n}\n"
    )
    (s,) = tu.launch_sites
    assert s.grid_text == "(n + 31) / 32" and s.block_text == "32" and s.loc.line == 3


def test_host_constants_chain_into_template_arguments(parse):
    tu = parse("""\
template <int B> __global__ void k(float* p) { p[threadIdx.x] = B; }
void h(float* p, int n) {
    constexpr int BS = 128;
    const int HALF = BS / 2;
    dim3 g = dim3((n + HALF - 1) / HALF, 2);
    dim3 b{HALF};
    k<HALF><<<g, b>>>(p);
}
""")
    (k,) = tu.kernels
    assert k.template_args == (("B", 64),)
    (s,) = tu.launch_sites
    assert s.grid_text == "(n + HALF - 1) / HALF, 2" and s.block_text == "HALF"
    assert len(s.grid) == 2 and s.template_args[0].value == 64
