"""Random mixed-type integer expressions: the interpreter against an exact Python C evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simt_helpers import run, tu_of

from cuda2nki.frontend.ast import ScalarType
from cuda2nki.frontend.typesys import arith_result, promote
from cuda2nki.simt import run_kernel

CTYPES = {
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "uint32": "unsigned",
    "int64": "long long",
    "uint64": "unsigned long long",
    "uint8": "unsigned char",
}
VARS = {
    "a": "int32",
    "b": "uint32",
    "c": "int8",
    "d": "int16",
    "e": "int64",
    "f": "uint64",
    "g": "uint8",
}


def wrap(v: int, t: str) -> int:
    bits = int("".join(ch for ch in t if ch.isdigit()))
    v &= (1 << bits) - 1
    if not t.startswith("u") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def cdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def leaf():
    return st.sampled_from(sorted(VARS)).map(lambda n: (n, lambda env, n=n: (env[n], VARS[n])))


def node(children):
    def binop(op, x, y):
        (sx, fx), (sy, fy) = x, y

        def ev(env):
            vx, tx = fx(env)
            vy, ty = fy(env)
            if op in ("<<", ">>"):
                t = promote(ScalarType(name=tx)).name
                s = vy & 7
                return (wrap(vx << s, t) if op == "<<" else vx >> s), t
            t = arith_result(ScalarType(name=tx), ScalarType(name=ty)).name
            a, b = wrap(vx, t), wrap(vy, t)
            if op in ("<", "==", "!="):
                r = {"<": a < b, "==": a == b, "!=": a != b}[op]
                return int(r), "int32"
            if op in ("/", "%"):
                if b == 0:
                    return 0, t
                q = cdiv(a, b)
                return wrap(q if op == "/" else a - q * b, t), t
            r = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]
            return wrap(r, t), t

        if op in ("<<", ">>"):
            src = f"({sx} {op} ({sy} & 7))"
        elif op in ("/", "%"):
            src = f"(({sy}) != 0 ? ({sx}) {op} ({sy}) : 0)"
        elif op in ("<", "==", "!="):
            src = f"(int)({sx} {op} {sy})"
        else:
            src = f"({sx} {op} {sy})"
        return src, ev

    def cast(t, x):
        sx, fx = x

        def ev(env):
            v, _ = fx(env)
            return wrap(v, t), t

        return f"(({CTYPES[t]})({sx}))", ev

    ops = st.sampled_from(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", "==", "!="])
    return st.one_of(
        st.builds(binop, ops, children, children),
        st.builds(cast, st.sampled_from(sorted(CTYPES)), children),
    )


EXPR = st.recursive(leaf(), node, max_leaves=6)


def vals(t: str):
    bits = int("".join(ch for ch in t if ch.isdigit()))
    lo, hi = (
        (0, (1 << bits) - 1) if t.startswith("u") else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    )
    return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 1, -1 if lo < 0 else 2]))


@settings(max_examples=40, deadline=None)
@given(expr=EXPR, env=st.fixed_dictionaries({k: vals(t) for k, t in VARS.items()}))
def test_mixed_integer_expression(expr, env) -> None:
    src_expr, ev = expr
    want, wt = ev(env)
    params = ", ".join(f"{CTYPES[t]} {n}" for n, t in sorted(VARS.items()))
    src = f"__global__ void k(long long* out, {params}) {{ out[threadIdx.x] = (long long)({src_expr}); }}"
    tu = tu_of(src)
    out = run_kernel(tu, "k", grid=(1,), block=(2,), args={"out": np.zeros(2, np.int64), **env})[
        "out"
    ]
    assert int(out[0]) == wrap(want, "int64"), (src_expr, env, wt)
    assert int(out[1]) == int(out[0])


@pytest.mark.parametrize(
    ("decl", "signed"),
    [("int", True), ("unsigned int", False), ("const int", True), ("uint32_t", False)],
)
def test_dp4a_byte_dot_product(decl: str, signed: bool) -> None:
    src = f"""
    #include <stdint.h>
    __global__ void k(const {decl}* a, const {decl}* b, const {decl}* c, {decl}* out) {{
        int i = threadIdx.x;
        out[i] = __dp4a(a[i], b[i], c[i]);
        out[64 + i] = __dp4a(a[i], b[i], 7);  // a literal accumulator
    }}"""
    dt = np.int32 if signed else np.uint32
    rng = np.random.default_rng(4)
    a = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32).view(dt)
    b = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32).view(dt)
    c = rng.integers(-(2**20), 2**20, 64).astype(dt)
    out = run(src, block=(64,), a=a, b=b, c=c, out=np.zeros(128, dt))["out"]
    bt = np.int8 if signed else np.uint8
    dot = (a.view(bt).reshape(64, 4).astype(np.int64) * b.view(bt).reshape(64, 4)).sum(1)
    for acc, got in ((c.astype(np.int64), out[:64]), (7, out[64:])):
        want = ((dot + acc) & 0xFFFFFFFF).astype(np.uint32).view(dt)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("decl", "signed"), [("int", True), ("unsigned", False)])
@pytest.mark.parametrize("half", ["lo", "hi"])
def test_dp2a_halves_by_bytes(decl: str, signed: bool, half: str) -> None:
    src = f"""
    __global__ void k(const {decl}* a, const {decl}* b, const {decl}* c, {decl}* out) {{
        int t = threadIdx.x;
        out[t] = __dp2a_{half}(a[t], b[t], c[t]);
    }}"""
    dt = np.int32 if signed else np.uint32
    rng = np.random.default_rng(9)
    a = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32).view(dt)
    b = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32).view(dt)
    a[:4] = np.array([0x7FFF8000, 0xFFFFFFFF, 0x80007FFF, 0], np.uint32).view(dt)
    b[:4] = np.array([0x80FF7F80, 0xFFFFFFFF, 0x7F7F8080, 0x01020304], np.uint32).view(dt)
    c = rng.integers(-(2**31), 2**31, 64).astype(np.int64).astype(np.uint32).view(dt)
    out = run(src, block=(64,), a=a, b=b, c=c, out=np.zeros(64, dt))["out"]
    halves = a.view(np.int16 if signed else np.uint16).reshape(64, 2).astype(np.int64)
    pick = slice(0, 2) if half == "lo" else slice(2, 4)
    lanes = b.view(np.int8 if signed else np.uint8).reshape(64, 4)[:, pick].astype(np.int64)
    dot = (halves * lanes).sum(1) + c.astype(np.int64)
    np.testing.assert_array_equal(out, (dot & 0xFFFFFFFF).astype(np.uint32).view(dt))


@pytest.mark.parametrize(
    ("lane", "half", "signed"), [("char", "short", True), ("uchar", "ushort", False)]
)
def test_byte_dots_of_vector_operands(lane: str, half: str, signed: bool) -> None:
    out_t = "int" if signed else "unsigned"
    src = f"""
    __global__ void k(const {lane}4* a, const {lane}4* b, const {half}2* h, {out_t}* out) {{
        int t = threadIdx.x;
        out[t] = __dp4a(a[t], b[t], ({out_t})t);
        out[32 + t] = __dp2a_lo(h[t], b[t], 5) + __dp2a_hi(h[t], a[t], 0);
    }}"""
    bt, ht = (np.int8, np.int16) if signed else (np.uint8, np.uint16)
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (32, 4)).astype(np.uint8).view(bt)
    b = rng.integers(0, 256, (32, 4)).astype(np.uint8).view(bt)
    h = rng.integers(0, 2**16, (32, 2)).astype(np.uint16).view(ht)
    dt = np.int32 if signed else np.uint32
    out = run(src, block=(32,), a=a.ravel(), b=b.ravel(), h=h.ravel(), out=np.zeros(64, dt))["out"]
    a64, b64, h64 = (x.astype(np.int64) for x in (a, b, h))
    dot4 = (a64 * b64).sum(1) + np.arange(32)
    dot2 = (h64 * b64[:, :2]).sum(1) + 5 + (h64 * a64[:, 2:]).sum(1)
    want = (np.concatenate([dot4, dot2]) & 0xFFFFFFFF).astype(np.uint32).view(dt)
    np.testing.assert_array_equal(out, want)
