"""Hand-written intent kernels (the lifter's output shape) used by the pass and codegen tests."""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Access,
    Axis,
    Binary,
    Compute,
    Const,
    Domain,
    Kernel,
    Lit,
    Param,
    Read,
    Reduce,
    ScalarDecl,
    Sym,
    TensorDecl,
    Unary,
)
from cuda2nki.ir.ops import AxisKind, Idiom, Op, Role

N, R, C, M, K = (Sym(n) for n in ("N", "R", "C", "M", "K"))
i, j, k = Sym("i"), Sym("j"), Sym("k")


def saxpy() -> Kernel:
    return Kernel(
        "saxpy",
        params=(
            ScalarDecl("n", "int32"),
            ScalarDecl("alpha", "float32"),
            TensorDecl("x", (Sym("n"),), "float32", Role.IN),
            TensorDecl("y", (Sym("n"),), "float32", Role.INOUT),
        ),
        body=(
            Compute(
                Access("y", (i,)),
                Domain((Axis("i", Sym("n")),)),
                Binary(Op.ADD, Binary(Op.MUL, Param("alpha"), Read("x", (i,))), Read("y", (i,))),
                idiom=Idiom.MAP,
            ),
        ),
    )


def bias_gelu() -> Kernel:
    """out[r, c] = gelu(in[r, c] + bias[c]) over a 2-D domain (the CUDA param is named `in`)."""
    return Kernel(
        "bias_gelu",
        params=(
            TensorDecl("out", (R, C), "float32", Role.OUT),
            TensorDecl("in", (R, C), "float32", Role.IN),
            TensorDecl("bias", (C,), "float32", Role.IN),
            ScalarDecl("R"),
            ScalarDecl("C"),
        ),
        body=(
            Compute(
                Access("out", (i, j)),
                Domain((Axis("i", R), Axis("j", C))),
                Unary(Op.GELU_TANH, Binary(Op.ADD, Read("in", (i, j)), Read("bias", (j,)))),
                idiom=Idiom.MAP,
            ),
        ),
    )


def softmax() -> Kernel:
    rows, both = Domain((Axis("i", R),)), Domain((Axis("i", R), Axis("j", C)))
    red = (Axis("j", C, AxisKind.REDUCTION),)
    x = Read("x", (i, j))
    return Kernel(
        "softmax",
        params=(
            TensorDecl("x", (R, C), "float32", Role.IN),
            TensorDecl("y", (R, C), "float32", Role.OUT),
            ScalarDecl("R"),
            ScalarDecl("C"),
        ),
        temps=(
            TensorDecl("m", (R,), "float32", Role.TEMP),
            TensorDecl("e", (R, C), "float32", Role.TEMP),
            TensorDecl("s", (R,), "float32", Role.TEMP),
        ),
        body=(
            Compute(Access("m", (i,)), rows, Reduce(Op.MAX, red, x), idiom=Idiom.SOFTMAX),
            Compute(
                Access("e", (i, j)),
                both,
                Unary(Op.EXP, Binary(Op.SUB, x, Read("m", (i,)))),
                idiom=Idiom.SOFTMAX,
            ),
            Compute(
                Access("s", (i,)), rows, Reduce(Op.ADD, red, Read("e", (i, j))), idiom=Idiom.SOFTMAX
            ),
            Compute(
                Access("y", (i, j)),
                both,
                Binary(Op.DIV, Read("e", (i, j)), Read("s", (i,))),
                idiom=Idiom.SOFTMAX,
            ),
        ),
    )


def layernorm() -> Kernel:
    rows, both = Domain((Axis("i", R),)), Domain((Axis("i", R), Axis("j", C)))
    red = (Axis("j", C, AxisKind.REDUCTION),)
    x = Read("x", (i, j))
    centered = Binary(Op.SUB, x, Read("mean", (i,)))
    return Kernel(
        "layernorm",
        params=(
            TensorDecl("x", (R, C), "float32", Role.IN),
            TensorDecl("gamma", (C,), "float32", Role.IN),
            TensorDecl("beta", (C,), "float32", Role.IN),
            TensorDecl("y", (R, C), "float32", Role.OUT),
            ScalarDecl("R"),
            ScalarDecl("C"),
            ScalarDecl("eps", "float32"),
        ),
        temps=(
            TensorDecl("mean", (R,), "float32", Role.TEMP),
            TensorDecl("rstd", (R,), "float32", Role.TEMP),
        ),
        body=(
            Compute(
                Access("mean", (i,)),
                rows,
                Binary(Op.DIV, Reduce(Op.ADD, red, x), Param("C")),
                idiom=Idiom.NORM,
            ),
            Compute(
                Access("rstd", (i,)),
                rows,
                Unary(
                    Op.RSQRT,
                    Binary(
                        Op.ADD,
                        Binary(
                            Op.DIV,
                            Reduce(Op.ADD, red, Binary(Op.MUL, centered, centered)),
                            Param("C"),
                        ),
                        Param("eps"),
                    ),
                ),
                idiom=Idiom.NORM,
            ),
            Compute(
                Access("y", (i, j)),
                both,
                Binary(
                    Op.ADD,
                    Binary(
                        Op.MUL, Binary(Op.MUL, centered, Read("rstd", (i,))), Read("gamma", (j,))
                    ),
                    Read("beta", (j,)),
                ),
                idiom=Idiom.NORM,
            ),
        ),
    )


def matmul(a_dtype: str = "bfloat16", transposed_b: bool = False) -> Kernel:
    b_idx, b_shape = ((j, k), (Sym("N"), K)) if transposed_b else ((k, j), (K, Sym("N")))
    return Kernel(
        "matmul",
        params=(
            TensorDecl("A", (M, K), a_dtype, Role.IN),
            TensorDecl("B", b_shape, a_dtype, Role.IN),
            TensorDecl("C", (M, Sym("N")), "float32", Role.OUT),
            ScalarDecl("M"),
            ScalarDecl("N"),
            ScalarDecl("K"),
        ),
        body=(
            Compute(
                Access("C", (i, j)),
                Domain((Axis("i", M), Axis("j", Sym("N")))),
                Reduce(
                    Op.ADD,
                    (Axis("k", K, AxisKind.REDUCTION),),
                    Binary(Op.MUL, Read("A", (i, k)), Read("B", b_idx)),
                    acc_dtype="float32",
                ),
                idiom=Idiom.CONTRACT,
            ),
        ),
    )


def gemv() -> Kernel:
    return Kernel(
        "gemv",
        params=(
            TensorDecl("A", (M, K), "float32", Role.IN),
            TensorDecl("x", (K,), "float32", Role.IN),
            TensorDecl("y", (M,), "float32", Role.OUT),
            ScalarDecl("M"),
            ScalarDecl("K"),
        ),
        body=(
            Compute(
                Access("y", (i,)),
                Domain((Axis("i", M),)),
                Reduce(
                    Op.ADD,
                    (Axis("k", K, AxisKind.REDUCTION),),
                    Binary(Op.MUL, Read("A", (i, k)), Read("x", (k,))),
                    acc_dtype="float32",
                ),
                idiom=Idiom.CONTRACT,
            ),
        ),
    )


def transpose() -> Kernel:
    return Kernel(
        "transpose",
        params=(
            TensorDecl("A", (M, Sym("N")), "float32", Role.IN),
            TensorDecl("B", (Sym("N"), M), "float32", Role.OUT),
            ScalarDecl("M"),
            ScalarDecl("N"),
        ),
        body=(
            Compute(
                Access("B", (j, i)),
                Domain((Axis("i", M), Axis("j", Sym("N")))),
                Read("A", (i, j)),
                idiom=Idiom.TRANSPOSE,
            ),
        ),
    )


def scan_refused() -> Kernel:
    from cuda2nki.ir.nodes import Scan

    return Kernel(
        "cumsum",
        params=(
            TensorDecl("x", (N,), "float32", Role.IN),
            TensorDecl("y", (N,), "float32", Role.OUT),
            ScalarDecl("N"),
        ),
        body=(
            Compute(
                Access("y", (i,)),
                Domain((Axis("i", N, AxisKind.SCAN),)),
                Scan(Op.ADD, "i", Read("x", (i,))),
                idiom=Idiom.SCAN,
            ),
        ),
    )


_ = Lit


def add_2d() -> Kernel:
    """c[i, j] = a[i, j] + b[i, j]."""
    return Kernel(
        "add_2d",
        params=(
            TensorDecl("a", (R, C), "float32", Role.IN),
            TensorDecl("b", (R, C), "float32", Role.IN),
            TensorDecl("c", (R, C), "float32", Role.OUT),
            ScalarDecl("R"),
            ScalarDecl("C"),
        ),
        body=(
            Compute(
                Access("c", (i, j)),
                Domain((Axis("i", R), Axis("j", C))),
                Binary(Op.ADD, Read("a", (i, j)), Read("b", (i, j))),
                idiom=Idiom.MAP,
            ),
        ),
    )


def stencil_1d() -> Kernel:
    """y[i + 1] = (x[i] + x[i + 1] + x[i + 2]) / 3 for i < N - 2 (interior points only)."""
    return Kernel(
        "stencil_1d",
        params=(
            TensorDecl("x", (N,), "float32", Role.IN),
            TensorDecl("y", (N,), "float32", Role.OUT),
            ScalarDecl("N"),
        ),
        body=(
            Compute(
                Access("y", (i + 1,)),
                Domain((Axis("i", N - 2),)),
                Binary(
                    Op.DIV,
                    Binary(
                        Op.ADD,
                        Binary(Op.ADD, Read("x", (i,)), Read("x", (i + 1,))),
                        Read("x", (i + 2,)),
                    ),
                    Lit(3.0, "float32"),
                ),
                idiom=Idiom.STENCIL,
            ),
        ),
    )


def stencil_2d() -> Kernel:
    """5-point Laplacian on the interior of an M x W grid."""
    W = Sym("W")

    def at(di: int, dj: int) -> Read:
        return Read("u", (i + di, j + dj))

    lap = Binary(
        Op.SUB,
        Binary(Op.ADD, Binary(Op.ADD, at(0, 1), at(2, 1)), Binary(Op.ADD, at(1, 0), at(1, 2))),
        Binary(Op.MUL, Lit(4.0, "float32"), at(1, 1)),
    )
    return Kernel(
        "stencil_2d",
        params=(
            TensorDecl("u", (M, W), "float32", Role.IN),
            TensorDecl("v", (M, W), "float32", Role.OUT),
            ScalarDecl("M"),
            ScalarDecl("W"),
        ),
        body=(
            Compute(
                Access("v", (i + 1, j + 1)),
                Domain((Axis("i", M - 2), Axis("j", W - 2))),
                lap,
                idiom=Idiom.STENCIL,
            ),
        ),
    )


def pair_sum() -> Kernel:
    """y[i] = x[2i] + x[2i + 1] - x[0] (strided lanes and a broadcast element)."""
    half = Sym("H")
    return Kernel(
        "pair_sum",
        params=(
            TensorDecl("x", (half * 2,), "float32", Role.IN),
            TensorDecl("y", (half,), "float32", Role.OUT),
            ScalarDecl("H"),
        ),
        body=(
            Compute(
                Access("y", (i,)),
                Domain((Axis("i", half),)),
                Binary(
                    Op.SUB,
                    Binary(Op.ADD, Read("x", (i * 2,)), Read("x", (i * 2 + 1,))),
                    Read("x", (Const(0),)),
                ),
                idiom=Idiom.MAP,
            ),
        ),
    )


def dot() -> Kernel:
    """out[0] = sum_k x[k] * y[k] / N  (a whole-vector reduction with an epilogue)."""
    kax = Axis("k", N, AxisKind.REDUCTION)
    return Kernel(
        "dot",
        params=(
            TensorDecl("x", (N,), "float32", Role.IN),
            TensorDecl("y", (N,), "float32", Role.IN),
            TensorDecl("out", (Const(1),), "float32", Role.OUT),
            ScalarDecl("N"),
        ),
        body=(
            Compute(
                Access("out", (Const(0),)),
                Domain(()),
                Binary(
                    Op.DIV,
                    Reduce(Op.ADD, (kax,), Binary(Op.MUL, Read("x", (k,)), Read("y", (k,)))),
                    Param("N"),
                ),
                idiom=Idiom.REDUCE,
            ),
        ),
    )


def atomic_max() -> Kernel:
    """out[0] = max(out[0], x[i]) for every i (an atomicMax accumulation)."""
    return Kernel(
        "atomic_max",
        params=(
            TensorDecl("x", (N,), "float32", Role.IN),
            TensorDecl("out", (Const(1),), "float32", Role.INOUT),
            ScalarDecl("N"),
        ),
        body=(
            Compute(
                Access("out", (Const(0),)),
                Domain((Axis("i", N),)),
                Unary(Op.ABS, Read("x", (i,))),
                accumulate=Op.MAX,
                idiom=Idiom.REDUCE,
            ),
        ),
    )


def encoder() -> Kernel:
    """out[b, t, c] = wte[clamp(inp[b, t], 0, V - 1), c] + wpe[t, c]  (gather on a 3-D domain)."""
    from cuda2nki.ir.nodes import Cast, Dyn, IndexValue

    b, t, c = Sym("b"), Sym("t"), Sym("c")
    B, T, Cc, V = Sym("B"), Sym("T"), Sym("C"), Sym("V")
    ix = Binary(
        Op.MIN,
        Binary(Op.MAX, Read("inp", (b, t)), Lit(0, "int32")),
        Cast("int32", IndexValue(V - 1)),
    )
    return Kernel(
        "encoder_forward",
        params=(
            TensorDecl("out", (B, T, Cc), "float32", Role.OUT),
            TensorDecl("inp", (B, T), "int32", Role.IN),
            TensorDecl("wte", (V, Cc), "float32", Role.IN),
            TensorDecl("wpe", (T, Cc), "float32", Role.IN),
            ScalarDecl("B"),
            ScalarDecl("T"),
            ScalarDecl("C"),
            ScalarDecl("V"),
        ),
        body=(
            Compute(
                Access("out", (b, t, c)),
                Domain((Axis("b", B), Axis("t", T), Axis("c", Cc))),
                Binary(Op.ADD, Read("wte", (Dyn(ix), c)), Read("wpe", (t, c))),
                idiom=Idiom.GATHER,
            ),
        ),
    )
