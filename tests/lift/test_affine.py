"""Affine analysis: polynomials, quasi-affine div/mod, global ids, grid-stride loops, guards."""

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Cond, compare, sym

T, B, BD, GD = sym("threadIdx.x"), sym("blockIdx.x"), sym("blockDim.x"), sym("gridDim.x")
N, C = sym("N"), sym("C")


def test_global_index_any_spelling():
    spellings = [T + B * BD, BD * B + T, B * BD + T]
    assert {af.canonical(p) for p in spellings} == {sym("gid.x")}
    # scaled (float4 lanes): 4*(b*bd + t) + 2
    assert af.canonical(4 * (B * BD + T) + 2) == 4 * sym("gid.x") + 2
    # a literal block size is recognised when the launch block is known
    assert af.canonical(B * 256 + T, block=(256, 1, 1)) == sym("gid.x")
    assert af.canonical(B * 128 + T, block=(256, 1, 1)) != sym("gid.x")


def test_2d_row_col():
    ty, by, bdy = sym("threadIdx.y"), sym("blockIdx.y"), sym("blockDim.y")
    row, col = by * bdy + ty, B * BD + T
    assert af.canonical(row * N + col) == sym("gid.y") * N + sym("gid.x")


def test_div_mod_quasi_affine_roundtrip():
    i = B * BD + T
    row, col = af.floordiv(i, C), af.mod(i, C)
    assert row * C + col == i
    n = sym("n")
    assert af.floordiv(n, 4) * 4 + af.mod(n, 4) == n
    assert af.floordiv(4 * T + 3, 4) == T
    assert af.mod(4 * T + 3, 4) == af.Poly.const(3)
    # thread index within the block
    assert af.floordiv(i, BD) == B and af.mod(i, BD) == T


def test_bounds_context_simplifies():
    ty, j = sym("threadIdx.y"), sym("j")
    with af.bounds({"threadIdx.y": 8, "j": 4}):
        assert af.mod(ty + 8 * j, 8) == ty
        assert af.floordiv(ty + 8 * j, 8) == j
        assert af.provably_neg(ty + 8 * j - 32)
        assert not af.provably_neg(ty + 8 * j - 31)


def test_affine_view():
    p = 3 * T + N * B + C
    a = af.affine(p, {"threadIdx.x", "blockIdx.x"})
    assert a.coeff("threadIdx.x") == af.Poly.const(3) and a.coeff("blockIdx.x") == N
    assert a.const == C
    assert af.affine(T * B, {"threadIdx.x", "blockIdx.x"}) is None


def test_grid_stride_recognised_in_any_order():
    for start in (T + B * BD, BD * B + T):
        for step in (BD * GD, GD * BD):
            gs = af.grid_stride(start, step, N)
            assert gs is not None and gs.dim == "x" and gs.start == af.ZERO
    assert af.grid_stride(T + B * BD, BD, N) is None


def test_guards_to_domain():
    gid = T + B * BD
    # if (i < n)
    d = af.domain_of(Cond.of(compare("<", gid, N)), af.GID)
    assert d.bounds["gid.x"].hi == (N,)
    # if (i >= n) return;  -> the rest runs under not(i >= n)
    ret = Cond.of(compare(">=", gid, N))
    d2 = af.domain_of(ret.negate(), af.GID)
    assert d2.bounds["gid.x"].hi == (N,)
    # combined && with a lower bound (stencil interior)
    c = Cond.of(compare(">=", gid, af.ONE)) & Cond.of(compare("<", gid + 1, N))
    d3 = af.domain_of(c, af.GID)
    assert d3.bounds["gid.x"].lo == (af.ONE,) and d3.bounds["gid.x"].hi == (N - 1,)
    # a disjunction is not a box
    assert af.domain_of(af.disj([ret, c]), af.GID) is None


def test_negation_is_integer_exact():
    c = compare("<", T, N)  # t < N
    assert c.negate().negate() == c
    assert af.Cmp((T - N).subs({"threadIdx.x": N}), "<") != c
