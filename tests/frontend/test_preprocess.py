"""Preprocessing: macros, conditionals, -D, -I, includes; locations map to the original file."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_file, parse_source
from cuda2nki.frontend.preprocess import preprocess
from cuda2nki.frontend.visit import find

SRC = """\
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#define BLOCK 128
#define IDX(r, c) ((r) * ld + (c))
/* a block comment
   spanning lines */
__global__ void k(float* out,
#ifdef HAS_BIAS
                  const float* bias,
#endif
                  int ld) {
    int r = blockIdx.x, c = threadIdx.x;   // trailing comment
    out[IDX(r, c)] = BLOCK * 2.0f
#ifdef HAS_BIAS
        + bias[c]
#endif
        ;
    float v = IDX(r,
                  c) + undefined_name;
}
"""


def test_object_and_function_macros_map_back_to_original_columns(parse):
    tu = parse(SRC)
    (d,) = tu.rejected["k"]
    assert (d.code, d.loc.line, d.loc.col) == ("C2N1020", 19, 24)
    tu = parse(SRC.replace("+ undefined_name", "+ 1.0f"))
    (k,) = tu.kernels
    assert [p.name for p in k.params] == ["out", "ld"]
    assign = find(k, A.Assign)[0]
    assert (assign.loc.line, assign.loc.col) == (13, 5)
    lit = [x for x in find(assign, A.IntLit) if x.value == 128][0]
    assert lit.loc.line == 13 and lit.loc.col == 22  # the expansion points at the macro use
    v = [x for x in find(k, A.VarDecl) if x.name == "v"][0]
    assert v.loc.line == 18


def test_define_on_the_command_line_and_ifdef_in_parameter_list(parse):
    tu = parse(SRC.replace("+ undefined_name", ""), defines={"HAS_BIAS": "1"})
    (k,) = tu.kernels
    assert [p.name for p in k.params] == ["out", "bias", "ld"]
    bias_use = [n for n in find(k, A.Name) if n.name == "bias"][0]
    assert (bias_use.loc.line, bias_use.loc.col) == (15, 11)


def test_define_value_substitutes(parse):
    src = "__global__ void k(float* p) {\n#if UNROLL > 2\n  p[0] = N;\n#else\n  p[1] = N;\n#endif\n}\n"
    tu = parse(src, defines={"UNROLL": "4", "N": "7"})
    (k,) = tu.kernels
    (stmt,) = k.body.body
    assert stmt.loc.line == 3 and stmt.expr.value.value == 7
    tu = parse(src, defines={"N": "7"})
    assert tu.kernels[0].body.body[0].loc.line == 5


def test_local_include_with_include_dir_maps_to_header(tmp_path, parse):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "helpers.cuh").write_text(
        "#pragma once\n#define SCALE 3.0f\n__device__ float f(float x) {\n    return x * SCALE;\n}\n"
    )
    main = tmp_path / "k.cu"
    main.write_text('#include "helpers.cuh"\n__global__ void k(float* p) { p[0] = f(p[0]); }\n')
    tu = parse_file(main, include_dirs=[inc])
    assert tu.rejected == {}
    f = tu.function("f")
    assert f.loc.file.endswith("helpers.cuh") and f.loc.line == 3
    ret = find(f, A.Return)[0]
    assert (ret.loc.line, ret.loc.col) == (4, 5)
    assert tu.function("k").loc.file == str(main)
    # without -I the header is found below the file's folder, and said so
    tu = parse_file(main)
    assert tu.rejected == {} and tu.function("f").loc.file.endswith("helpers.cuh")
    assert [(d.code, d.loc.line, d.loc.col) for d in tu.diagnostics] == [("C2N1005", 1, 11)]
    # out of reach (a sibling folder, no repository above): a warning, `f` an unknown function
    src = tmp_path / "src"
    src.mkdir()
    main = main.rename(src / "k.cu")
    tu = parse_file(main)
    assert any(d.code == "C2N1004" and d.loc.line == 1 for d in tu.diagnostics)
    assert [d.code for d in tu.rejected["k"]] == ["C2N1021"]


def test_system_headers_are_skipped_silently(parse):
    tu = parse(
        "#include <cuda_runtime.h>\n#include <cooperative_groups.h>\n#define X 1\n"
        "__global__ void k(int* p) { p[0] = X; }\n"
    )
    assert tu.diagnostics == () and len(tu.kernels) == 1


@pytest.mark.parametrize(
    "header",
    ["assert.h", "stdio.h", "cmath", "cuda_runtime.h", "cooperative_groups.h", "sys/time.h",
     "cuda_bf16.h", "vector"],
)  # fmt: skip
def test_quoted_standard_headers_are_skipped_silently(parse, header):
    tu = parse(
        f'#include "{header}"\n#include "{header}"\n#define X 2\n'
        "__global__ void k(int* p) { assert(X > 1); p[0] = X; }\n"
    )
    assert tu.diagnostics == () and len(tu.kernels) == 1


def test_a_quoted_project_header_is_still_reported_missing(parse):
    tu = parse('#include "assert_helpers.h"\n#include "my/stdio.h"\n__global__ void k(int* p) {}\n')
    assert [d.code for d in tu.diagnostics] == ["C2N1004", "C2N1004"]


def test_a_local_file_named_like_a_standard_header_is_read(tmp_path):
    (tmp_path / "math.h").write_text("#define SCALE 3\n")
    main = tmp_path / "k.cu"
    main.write_text('#include "math.h"\n__global__ void k(int* p) { p[0] = SCALE; }\n')
    tu = parse_file(main)
    assert tu.diagnostics == () and "k" not in tu.rejected


def test_error_directive_is_reported(parse):
    tu = parse("#ifndef ARCH\n#error need ARCH\n#endif\n__global__ void k(int* p) { p[0] = 1; }\n")
    assert any(d.code == "C2N1003" and d.loc.line == 2 for d in tu.diagnostics)
    assert "k" in tu.rejected and tu.kernels == ()
    tu = parse(
        "#ifndef ARCH\n#error need ARCH\n#endif\n__global__ void k(int* p) { p[0] = 1; }\n",
        defines={"ARCH": "80"},
    )
    assert tu.rejected == {} and len(tu.kernels) == 1


def test_pragma_unroll_survives_preprocessing(parse):
    tu = parse(
        "#define N 8\n__global__ void k(float* p) {\n#pragma unroll 4\n"
        "  for (int i = 0; i < N; ++i) p[i] = 0;\n  #pragma unroll\n"
        "  for (int i = 0; i < N; ++i) p[i] = 1;\n  for (int i = 0; i < N; ++i) p[i] = 2;\n}\n"
    )
    loops = find(tu.kernels[0], A.For)
    assert [lp.unroll for lp in loops] == [4, 0, None]
    assert [lp.loc.line for lp in loops] == [4, 6, 7]


def test_fast_path_without_directives_is_identity():
    pre = preprocess("__global__ void k() {}\n", "x.cu")
    assert not pre.used_pcpp
    pre = preprocess("#include <cuda.h>\n#pragma once\n__global__ void k() {}\n", "x.cu")
    assert not pre.used_pcpp
    pre = preprocess('#include "local.h"\n__global__ void k() {}\n', "x.cu")
    assert pre.used_pcpp


def test_object_like_macros_without_the_full_preprocessor(parse):
    src = (
        "#define N 4  // four\n#define M (N * 2) /* eight */\n#define F 1.5f\n"
        "__global__ void k(float* p) {\n"
        '    printf("N = %d\\n", N);  // N in a comment\n'
        "    p[0] = M + F + undefined;\n}\n"
    )
    pre = preprocess(src, "x.cu")
    assert (
        not pre.used_pcpp
        and '"N = %d' in pre.text
        and "p[0] = (4 * 2) + 1.5f + undefined;" in pre.text
    )
    tu = parse(src)
    (d,) = tu.rejected["k"]
    assert (d.code, d.loc.line, d.loc.col) == ("C2N1020", 6, 20)
    tu = parse(src.replace(" + undefined", ""), defines={"EXTRA": "2"})
    (k,) = tu.kernels
    v = k.body.body[1].expr.value
    assert v.ty.name == "float32" and v.left.op == "*" and v.right.value == 1.5


def test_align_attribute(parse):
    tu = parse(
        "__global__ void k(float* p) {\n"
        "    __shared__ __align__(16) float s[64];\n"
        "    s[threadIdx.x] = p[0];\n    p[1] = s[0];\n}\n"
    )
    assert tu.rejected == {}
    decl = tu.kernels[0].body.body[0]
    assert decl.storage == "shared" and (decl.loc.line, decl.loc.col) == (2, 36)


def test_pragma_unroll_applies_only_to_the_next_loop(parse):
    tu = parse(
        "__global__ void k(float* p) {\n    #pragma unroll 2\n    int n = 4;\n"
        "    for (int i = 0; i < n; ++i) p[i] = 0;\n}\n"
    )
    assert [lp.unroll for lp in find(tu.kernels[0], A.For)] == [None]


def test_nvcc_predefined_macros(parse):
    src = (
        "#if defined(__CUDA_ARCH__) && CUDART_VERSION >= 9000 && __cplusplus >= 201103L\n"
        "#define SHFL(v, o) __shfl_down_sync(0xffffffff, v, o)\n#else\n"
        "#define SHFL(v, o) __shfl_down(v, o)\n#endif\n"
        "__global__ void k(float* p) { p[0] = SHFL(p[0], 1); }\n"
    )
    assert [c.func for c in find(parse(src).kernels[0], A.Call)] == ["__shfl_down_sync"]
    old = parse(src, defines={"CUDART_VERSION": "8000"})
    assert [c.func for c in find(old.kernels[0], A.Call)] == ["__shfl_down"]


def test_linux_platform_macros(parse):
    # platform switches that end in `#error` on an unknown system (nvcc on Linux)
    src = (
        "#if defined(__linux__)\n#define SCALE 2.0f\n#elif defined(_WIN32)\n#define SCALE 3.0f\n"
        "#else\n#error Unsupported system\n#endif\n"
        "#ifdef __unix__\n#define OFF 1\n#endif\n"
        "__global__ void k(float* p) { p[OFF] = SCALE; }\n"
    )
    tu = parse(src)
    assert tu.rejected == {} and not [d for d in tu.diagnostics if d.code == "C2N1003"]
    assert [lit.value for lit in find(tu.kernels[0], A.FloatLit)] == [2.0]


# -------------------------------------------------------------- conditionals without pcpp

LINE_FOR_LINE = [
    # function-like macros, nested calls, arguments with parentheses and commas
    "#define SQ(x) ((x) * (x))\n#define MAD(a, b, c) ((a) * (b) + (c))\n#define B 64\n"
    "__global__ void k(float* p, int n) {  // a comment\n"
    "    int i = MAD(blockIdx.x, B, threadIdx.x);\n"
    "    if (i < n) p[i] = SQ(p[MAD(i, 1, 0)]) + MAD( p[0] , min(i, 2), SQ(1.0f));\n}\n",
    # #if / #elif / #else with defined, arithmetic and nesting; a parameter under #ifdef
    "#define LEVEL 2\n#if LEVEL > 3 || defined(NOPE)\n#define V 1\n#elif (LEVEL * 2) % 3 == 1"
    " && !defined NOPE\n#define V 2\n#else\n#define V 3\n#endif\n"
    "#ifndef V\n#error no V\n#endif\n"
    "__global__ void k(float* p,\n#ifdef HAS_N\n  int n,\n#endif\n  float s) {\n"
    "#if V == 2\n#  if LEVEL & 2\n    p[0] = s * V;\n#  endif\n#else\n    p[1] = s;\n#endif\n}\n",
    # #undef, a macro name inside a string and a comment, a block comment with a directive
    "#define W 8\n#define IDX(r, c) ((r) * W + (c))\n/* not a directive:\n#define W 9\n*/\n"
    "__global__ void k(float* p) {\n    p[IDX(threadIdx.y, threadIdx.x)] = W; // W\n"
    '    printf("W IDX(1, 2)");\n}\n#undef W\n',
    # a typedef chosen by #if defined(...)
    "#if defined(USE_FP32)\ntypedef float real;\n#else\ntypedef __half real;\n#endif\n"
    "__global__ void k(real* p) { p[threadIdx.x] = (real)1.0f; }\n",
]


@pytest.mark.parametrize("src", LINE_FOR_LINE)
@pytest.mark.parametrize("defines", [None, {"HAS_N": "1", "USE_FP32": ""}])
def test_conditionals_and_function_macros_match_pcpp(src, defines, monkeypatch):
    from cuda2nki.frontend import preprocess as P
    from cuda2nki.frontend.dump import dump_ast
    from cuda2nki.frontend.visit import walk

    assert not preprocess(src, "k.cu", defines).used_pcpp

    def snapshot():
        tu = parse_source(src, "k.cu", defines=defines)
        starts = [(n.loc.file, n.loc.line, n.loc.col) for n in walk(tu)]
        return dump_ast(tu), starts, tu.diagnostics, tuple(tu.rejected)

    ours = snapshot()
    monkeypatch.setattr(P, "_conditional_macros", lambda text, defines: None)
    assert preprocess(src, "k.cu", defines).used_pcpp
    assert ours == snapshot()


@pytest.mark.parametrize(
    "src",
    [
        "#define CAT(a, b) a##b\n__global__ void k(float* p) { p[0] = 1; }\n",
        "#define STR(a) #a\n__global__ void k(float* p) { p[0] = 1; }\n",
        "#define V(...) __VA_ARGS__\n__global__ void k(float* p) { p[0] = V(1); }\n",
        "#define F(a) (a)\n__global__ void k(float* p) { p[0] = F(1,\n 2); }\n",
        "#define A 1\n#define A 2\n__global__ void k(float* p) { p[0] = A; }\n",
        "#define LONG 1 + \\\n 2\n__global__ void k(float* p) { p[0] = LONG; }\n",
        "#if X ? 1 : 0\n#endif\n__global__ void k(float* p) { p[0] = 1; }\n",
        "#if 1\n__global__ void k(float* p) { p[0] = 1; }\n",
        "#warning careful\n__global__ void k(float* p) { p[0] = 1; }\n",
    ],
)
def test_what_the_line_for_line_path_leaves_to_pcpp(src):
    """pcpp is kept for what the line-for-line path does not do (and reports its errors)."""
    assert preprocess(src, "k.cu").used_pcpp


def test_line_for_line_path_keeps_exact_end_columns_before_a_trailing_comment(parse):
    tu = parse(LINE_FOR_LINE[2])
    stmt = tu.kernels[0].body.body[0]  # p[IDX(threadIdx.y, threadIdx.x)] = W; // W
    assert (stmt.loc.col, stmt.loc.end_col) == (5, 42)
    lit = stmt.expr.value
    assert lit.value == 8 and (lit.loc.col, lit.loc.end_col) == (40, 41)


def test_pragma_unroll_count_from_a_macro(parse):
    # object-like macros only (simple path) and with a function-like one (line-for-line path)
    for extra in ("", "#define SQ(x) ((x) * (x))\n"):
        src = extra + (
            "#define U 4\n__global__ void k(float* p) {\n#pragma unroll U\n"
            "  for (int i = 0; i < 8; ++i) p[i] = 0;\n}\n"
        )
        assert not preprocess(src, "k.cu").used_pcpp
        (loop,) = find(parse(src).kernels[0], A.For)
        assert loop.unroll == 4


def test_object_like_macros_replace_whole_names_only():
    src = (
        "#define N 4\n#define NN 8\n"
        "int a = N + NN + MY_N + N_2 + xN + N2 + _N;  /* N */ int b = (N)*N-N;\n"
        "const char* s = \"N\"; char c = 'N'; int d = \u00e9N + N\u00e9 + N;\n"
    )
    pre = preprocess(src, "x.cu")
    assert not pre.used_pcpp
    lines = pre.text.split("\n")
    assert lines[2] == "int a = 4 + 8 + MY_N + N_2 + xN + N2 + _N;  /* N */ int b = (4)*4-4;"
    assert lines[3] == "const char* s = \"N\"; char c = 'N'; int d = \u00e9N + N\u00e9 + 4;"
