"""Hypothesis strategies producing arbitrary (syntactically complete, not necessarily valid) IR."""

from __future__ import annotations

from hypothesis import strategies as st

from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import DTYPES, AxisKind, Buffer, Idiom, LoopKind, Op, Role

NAMES = st.one_of(
    st.sampled_from(["i", "j", "k", "N", "x", "out", "in", "y2", "_t", "acc"]),
    st.sampled_from(["for", "scan", "reduce", "temp", "index", "inf", "true", "ds", "a b", "x.y"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
)
FILES = st.sampled_from(["k.cu", "dir/with space.cu", 'q"uote.cu', "other.cu"])
LOCS = st.one_of(
    st.just(n.UNKNOWN_LOC),
    st.builds(
        n.SourceLoc,
        FILES,
        st.integers(1, 5000),
        st.integers(1, 300),
        st.none() | st.integers(1, 5000),
        st.none() | st.integers(1, 300),
    ),
)
DT = st.sampled_from(DTYPES)
OPS1 = st.sampled_from(sorted((o for o in Op if o.arity == 1), key=str))
OPS2 = st.sampled_from(sorted((o for o in Op if o.arity == 2), key=str))
ANYOP = st.sampled_from(sorted(Op, key=str))


def sizes(allow_dyn: bool = True) -> st.SearchStrategy[n.SizeExpr]:
    leaves = st.one_of(st.builds(n.Sym, NAMES), st.builds(n.Const, st.integers(-1000, 10**6)))
    bins = [n.Add, n.Sub, n.Mul, n.FloorDiv, n.CeilDiv, n.Mod, n.Min, n.Max]

    def extend(child):
        out = st.one_of(*(st.builds(c, child, child) for c in bins))
        if allow_dyn:
            out = out | st.builds(n.Dyn, st.builds(n.Read, NAMES, st.tuples(child)))
        return out

    return st.recursive(leaves, extend, max_leaves=6)


SIZES = sizes()
FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.1, -2.5, 1e-5, 3e38])
LITS = st.builds(n.Lit, st.one_of(FLOATS, st.integers(-(2**40), 2**40), st.booleans()), DT, LOCS)


def axes(kind: AxisKind | None = None) -> st.SearchStrategy[n.Axis]:
    kinds = st.sampled_from(list(AxisKind)) if kind is None else st.just(kind)
    return st.builds(n.Axis, NAMES, SIZES, kinds, LOCS)


def _exprs() -> st.SearchStrategy[n.Expr]:
    leaves = st.one_of(
        st.builds(n.Read, NAMES, st.lists(SIZES, max_size=3).map(tuple), LOCS),
        LITS,
        st.builds(n.Param, NAMES, LOCS),
        st.builds(n.IndexValue, SIZES, DT, LOCS),
    )

    def extend(child):
        return st.one_of(
            st.builds(n.Unary, OPS1, child, LOCS),
            st.builds(n.Binary, OPS2, child, child, LOCS),
            st.builds(n.Select, child, child, child, LOCS),
            st.builds(n.Cast, DT, child, LOCS),
            st.builds(
                n.Reduce,
                ANYOP,
                st.lists(axes(), min_size=1, max_size=2).map(tuple),
                child,
                st.none() | DT,
                st.none() | child,
                LOCS,
            ),
            st.builds(n.Scan, ANYOP, NAMES, child, st.booleans(), st.none() | DT, LOCS),
        )

    return st.recursive(leaves, extend, max_leaves=8)


EXPRS = _exprs()
ATTRS = st.lists(st.tuples(st.text(max_size=5), st.text(max_size=5)), max_size=2).map(tuple)

COMPUTES = st.builds(
    n.Compute,
    st.builds(n.Access, NAMES, st.lists(SIZES, max_size=3).map(tuple), LOCS),
    st.builds(n.Domain, st.lists(axes(), max_size=3).map(tuple), st.none() | EXPRS),
    EXPRS,
    st.none() | ANYOP,
    st.sampled_from(list(Idiom)),
    ATTRS,
    LOCS,
)


def _dims(depth: int) -> st.SearchStrategy:
    base = st.one_of(
        st.builds(n.Slice, SIZES, SIZES, st.integers(-4, 8)),
        st.builds(n.At, SIZES),
    )
    if depth > 0:
        base = base | st.builds(n.Indirect, views(depth - 1))
    return base


def views(depth: int = 1) -> st.SearchStrategy[n.View]:
    return st.builds(n.View, NAMES, st.lists(_dims(depth), max_size=3).map(tuple))


VIEWS = views()
OPERANDS = st.one_of(VIEWS, LITS, st.builds(n.Param, NAMES, LOCS))
SMALL = st.integers(-3, 600)

LEAF_STMTS = st.one_of(
    st.builds(
        n.Alloc,
        NAMES,
        st.lists(SIZES, max_size=3).map(tuple),
        DT,
        st.sampled_from(list(Buffer)),
        LOCS,
    ),
    st.builds(n.Load, VIEWS, VIEWS, LOCS),
    st.builds(n.Store, VIEWS, VIEWS, st.none() | ANYOP, LOCS),
    st.builds(n.Matmul, VIEWS, VIEWS, VIEWS, st.booleans(), LOCS),
    st.builds(
        n.Activation,
        VIEWS,
        ANYOP,
        VIEWS,
        st.none() | OPERANDS,
        st.none() | OPERANDS,
        st.none() | VIEWS,
        LOCS,
    ),
    st.builds(n.TensorTensor, VIEWS, ANYOP, VIEWS, VIEWS, LOCS),
    st.builds(
        n.TensorScalar,
        VIEWS,
        VIEWS,
        ANYOP,
        OPERANDS,
        st.booleans(),
        st.none() | ANYOP,
        st.none() | OPERANDS,
        st.booleans(),
        LOCS,
    ),
    st.builds(
        n.TensorReduce,
        VIEWS,
        ANYOP,
        VIEWS,
        st.lists(SMALL, max_size=3).map(tuple),
        st.booleans(),
        LOCS,
    ),
    st.builds(n.TensorTranspose, VIEWS, VIEWS, LOCS),
    st.builds(n.TensorSelect, VIEWS, VIEWS, OPERANDS, OPERANDS, LOCS),
    st.builds(n.TensorCopy, VIEWS, VIEWS, LOCS),
    st.builds(n.TensorScan, VIEWS, VIEWS, ANYOP, OPERANDS, LOCS),
    st.builds(n.IntArith, VIEWS, ANYOP, OPERANDS, OPERANDS, st.booleans(), LOCS),
    st.builds(n.Memset, VIEWS, LITS, LOCS),
    st.builds(
        n.Iota, VIEWS, st.lists(st.tuples(SMALL, SMALL), max_size=3).map(tuple), SMALL, SMALL, LOCS
    ),
    st.builds(n.Note, st.text(max_size=8), st.text(max_size=12), LOCS),
    COMPUTES,
)

STMTS = st.recursive(
    LEAF_STMTS,
    lambda child: st.builds(
        n.Loop,
        NAMES,
        SIZES,
        SIZES,
        st.integers(-2, 4),
        st.sampled_from(list(LoopKind)),
        st.lists(child, max_size=3).map(tuple),
        LOCS,
    ),
    max_leaves=6,
)

PARAMS = st.one_of(
    st.builds(
        n.TensorDecl,
        NAMES,
        st.lists(SIZES, max_size=3).map(tuple),
        DT,
        st.sampled_from(list(Role)),
        LOCS,
    ),
    st.builds(n.ScalarDecl, NAMES, DT, LOCS),
)

KERNELS = st.builds(
    n.Kernel,
    NAMES,
    st.lists(PARAMS, max_size=4).map(tuple),
    st.lists(STMTS, max_size=4).map(tuple),
    st.lists(
        st.builds(
            n.TensorDecl,
            NAMES,
            st.lists(SIZES, max_size=2).map(tuple),
            DT,
            st.sampled_from(list(Role)),
            LOCS,
        ),
        max_size=2,
    ).map(tuple),
    st.lists(st.tuples(NAMES, st.text(max_size=6)), max_size=2).map(tuple),
    LOCS,
)
