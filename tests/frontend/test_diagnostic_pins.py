"""Refused constructs and syntax errors: rule id, line and column are pinned."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A


def _pins(tu: A.TranslationUnit, name: str) -> list[tuple[str, int, int]]:
    return [(d.code, d.loc.line, d.loc.col) for d in tu.rejected[name]]


CASES = [
    # (source of the kernel body, expected (id, line, col)); the body starts on line 2
    ("    int i = 0;\n    goto out;\nout:\n    p[0] = i;\n", ("C2N1011", 3, 5)),
    ('    int lane;\n    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));\n', ("C2N1013", 3, 5)),
    ("    void* buf = cudaGetParameterBuffer(8, 8);\n", ("C2N1014", 2, 17)),
    ("    p[0] = tex1Dfetch<float>(tex, 0);\n", ("C2N1015", 2, 12)),
    ("    p[0] = tex2D(tex, 0.5f, 0.5f);\n", ("C2N1015", 2, 12)),
    ("    cg::this_multi_grid().sync();\n", ("C2N1016", 2, 5)),
    ("    auto grid = cg::this_multi_grid();\n    grid.sync();\n", ("C2N1016", 2, 17)),
    ("    wmma::bmma_sync(c, a, b, c);\n", ("C2N1017", 2, 5)),
    ("    float c[8];\n    nvcuda::wmma::mma_sync(c, c, c, c);\n", ("C2N1017", 3, 28)),
    (
        "    wmma::fragment<wmma::matrix_a, 8, 8, 128, wmma::experimental::precision::b1,"
        " wmma::row_major> a;\n",
        ("C2N1017", 2, 47),
    ),
    ("    auto pipe = cuda::make_pipeline(cg::this_thread_block(), p);\n", ("C2N1018", 2, 17)),
    (
        "    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> s;\n",
        ("C2N1018", 2, 16),
    ),
    ("    p[0] = SCALE * 2;\n", ("C2N1020", 2, 12)),
    ("    p[0] = helper(1.0f);\n", ("C2N1021", 2, 12)),
    ("    my_real x = 0;\n", ("C2N1022", 2, 5)),
    ("    int n = 4;\n    __shared__ float s[n];\n", ("C2N1026", 3, 24)),
    ("    __syncthreads(1, 2);\n", ("C2N1028", 2, 5)),
    ("    auto g = cg::coalesced_threads();\n    p[0] = g.shfl(p[0], 3);\n", ("C2N1029", 3, 12)),
    ("    float x = 1.0f;\n    x.y = 2;\n", ("C2N1030", 3, 5)),
    ("    auto f = [p](float x) mutable { p[0] = x; };\n", ("C2N1010", 2, 14)),
    ("    for (float v : {1.0f, 2.0f}) p[0] += v;\n", ("C2N1010", 2, 5)),
    ("    float* q = new float[4];\n", ("C2N1010", 2, 16)),
    ("    struct { int a; } s;\n", ("C2N1025", 2, 5)),
    ("    union { int a; float b; } u;\n", ("C2N1025", 2, 5)),
    ("    float& r = 1.0f;\n", ("C2N1030", 2, 16)),
    ("    throw 1;\n", ("C2N1010", 2, 5)),
    ("    p[0] = ;\n", ("C2N1001", 2, 10)),
]


@pytest.mark.parametrize(
    ("body", "pin"), CASES, ids=[c[1][0] + f"-{i}" for i, c in enumerate(CASES)]
)
def test_refused_construct_pins_id_line_col(parse, body, pin):
    src = "__global__ void k(float* p) {\n" + body + "}\n"
    tu = parse(src)
    assert "k" in tu.rejected, tu.diagnostics
    assert tu.kernels == ()
    assert pin in _pins(tu, "k")
    assert any(d.code == pin[0] for d in tu.diagnostics)


def test_printf_is_accepted_with_a_note(parse):
    tu = parse('__global__ void k(float* p) {\n    printf("%f\\n", p[0]);\n    p[0] = 1;\n}\n')
    assert tu.rejected == {}
    (k,) = tu.kernels
    assert [(d.code, d.loc.line, d.loc.col) for d in tu.diagnostics] == [("C2N1019", 2, 5)]
    assert len(k.body.body) == 2 and isinstance(k.body.body[0], A.Empty)


def test_direct_and_mutual_recursion(parse):
    tu = parse("""\
__device__ int f(int n) { return n ? f(n - 1) : 0; }
__device__ int even(int n);
__device__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }
__device__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }
__device__ int fine(int n) { return n + 1; }
__global__ void k(int* p) { p[0] = odd(p[1]); }
__global__ void clean(int* p) { p[0] = fine(p[1]); }
""")
    assert ("C2N1012", 1, 38) in [(d.code, d.loc.line, d.loc.col) for d in tu.diagnostics]
    assert set(tu.rejected) == {"k"}  # only kernels are listed; device functions in diagnostics
    assert {f.name for f in tu.functions} == {"fine", "clean"}
    assert all(d.code == "C2N1012" for d in tu.rejected["k"])
    assert [f.name for f in tu.kernels] == ["clean"]


def test_syntax_error_in_one_kernel_does_not_reject_another(parse):
    tu = parse("""\
__global__ void broken(float* p) {
    p[0] = (1 + ;
}
__global__ void ok(float* p) { p[0] = 1.0f; }
""")
    assert [f.name for f in tu.kernels] == ["ok"]
    assert [(d.code, d.loc.line) for d in tu.rejected["broken"]] == [("C2N1001", 2)]


def test_syntax_error_in_host_code_is_a_warning(parse):
    tu = parse("""\
__global__ void ok(float* p) { p[0] = 1.0f; }
int main() {
    std::vector<int> v{ ;
    ok<<<1, 1>>>(nullptr);
    return 0;
}
""")
    assert [f.name for f in tu.kernels] == ["ok"]
    assert tu.rejected == {}
    assert {d.code for d in tu.diagnostics} <= {"C2N1002"}


def test_device_function_error_rejects_its_callers_only(parse):
    tu = parse("""\
__device__ float bad(float x) { asm("trap;"); return x; }
__global__ void uses_bad(float* p) { p[0] = bad(p[0]); }
__global__ void clean(float* p) { p[0] = 2.0f * p[0]; }
""")
    assert set(tu.rejected) == {"uses_bad"}
    assert tu.function("bad") is None
    assert [(d.code, d.loc.line) for d in tu.diagnostics] == [("C2N1013", 1)]
    assert [d.code for d in tu.rejected["uses_bad"]] == ["C2N1013"]
    assert [f.name for f in tu.kernels] == ["clean"]


def test_every_diagnostic_id_is_declared():
    from cuda2nki.diagnostics import rules

    table = rules()
    for code in {c[1][0] for c in CASES} | {
        "C2N1002",
        "C2N1003",
        "C2N1004",
        "C2N1012",
        "C2N1019",
        "C2N1023",
        "C2N1024",
        "C2N1027",
    }:
        assert code in table and table[code].explanation and table[code].fix


def test_cooperative_launch_is_a_launch_site(parse):
    tu = parse("""\
__global__ void k(float* p) { p[0] = 1; }
void host(float* p) {
    void* args[] = {&p};
    cudaLaunchCooperativeKernel((void*)k, dim3(2), dim3(32), args);
}
""")
    assert tu.rejected == {} and [k.name for k in tu.kernels] == ["k"]
    assert [(s.kernel, s.loc.line) for s in tu.launch_sites] == [("k", 4)]


def test_kernels_swallowed_by_broken_host_code_are_recovered(parse):
    tu = parse("""\
struct Foo { int a;
void broken( {
__global__ void clean1(float* p) { p[0] = 1.0f; }
int x = ;
template <int B>
__global__ void clean2(float* p, int n) { if (n > 0 && n < B && B > 1) p[1] = B; }
__global__ void bad(float* p) { p[2] = (; }
__global__ void clean3(float* p) { p[2] = 3.0f; }
void host(float* p, int n) { clean2<4><<<1, 1>>>(p, n); }
""")
    assert [f.name for f in tu.kernels] == ["clean1", "clean2", "clean3"]
    c1 = tu.function("clean1")
    assert (c1.loc.line, c1.loc.col) == (3, 1) and c1.body.body[0].loc.line == 3
    assert tu.function("clean2").template_args == (("B", 4),)
    assert [(d.code, d.loc.line) for d in tu.rejected["bad"]] == [("C2N1001", 7)]
    assert ("C2N1002", 1) in [(d.code, d.loc.line) for d in tu.diagnostics]


def test_file_scope_shared_variable_of_an_unknown_type_is_refused_at_its_use(parse):
    tu = parse("__shared__ Mystery s[32];\n__global__ void k(float* p) {\n    s[0] = p[0];\n}\n")
    assert [(d.code, d.loc.line, d.loc.col) for d in tu.rejected["k"]] == [("C2N1010", 3, 5)]
    assert "'s' of this type" in tu.rejected["k"][0].message


def test_file_scope_shared_variables_are_declared_in_the_kernels_using_them(parse):
    tu = parse(
        "__shared__ float s[32], t;\n__shared__ int u;\n"
        "__device__ void f() { t = s[1]; }\n"
        "__global__ void k(float* p) { f(); p[0] = t; }\n"
        "__global__ void k2(int* p) { p[0] = u; }\n"
        "__global__ void k3(float* p) { p[0] = 1; }\n"
    )
    assert not tu.rejected
    assert [(d.name, d.storage) for d in tu.file_shared] == [
        ("s", "shared"),
        ("t", "shared"),
        ("u", "shared"),
    ]

    def decls(name):
        body = tu.function(name).body.body
        return [s.name for s in body if isinstance(s, A.VarDecl) and s.storage == "shared"]

    assert decls("k") == ["s", "t"]  # through the callee: declaration order
    assert decls("k2") == ["u"] and decls("k3") == [] and decls("f") == []
    assert tu.function("k").body.body[0] is tu.file_shared[0]  # one declaration, one array


def test_no_kernel_is_lost_silently(parse):
    tu = parse("""\
__global__ void __launch_bounds__(64) __weird_attr__(2) lost(float* p) { p[0] = 1; }
__global__ void proto(float* p);
// __global__ void in_a_comment(int x)
__global__ void proto(float* p) { p[0] = 2; }
__global__ void __launch_bounds__(64) __maxnreg__(32) k4(float* p) { p[0] = 3; }
__global__ void __cluster_dims__(2, 1, 1) k5(float* p) { p[0] = 4; }
""")
    assert [f.name for f in tu.kernels] == ["proto", "k4", "k5"]
    assert [(d.code, d.loc.line, d.loc.col) for d in tu.rejected["lost"]] == [("C2N1001", 1, 57)]
    assert set(tu.rejected) == {"lost"}


def test_every_frontend_rule_is_used_and_documented():
    from pathlib import Path

    from cuda2nki.diagnostics import rules

    src = "".join(p.read_text() for p in Path(__file__).parents[2].glob("cuda2nki/frontend/*.py"))
    ours = {c: r for c, r in rules().items() if c.startswith("C2N1") and int(c[3:]) < 1500}
    assert len(ours) >= 20
    for code, r in ours.items():
        assert f'"{code}"' in src, f"{code} is declared but never reported"
        assert r.explanation and r.example and r.fix, code
