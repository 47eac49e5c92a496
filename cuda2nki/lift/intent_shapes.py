"""What the intent lowering knows of a binding: tensor shapes and the launch as polynomials
(:class:`Shapes`), size expressions parsed with C semantics, iteration axes, and polynomials
named as IR sizes (:class:`Namer`).
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
from dataclasses import dataclass

from cuda2nki.ir import nodes as N
from cuda2nki.lift import affine as af
from cuda2nki.lift import values as V
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.capped import capped_args, capped_text, is_capped
from cuda2nki.lift.symexec import Refusal

_AXIS_NAMES = "ijklmnpqrs"


# --------------------------------------------------------------------------- launch/shape info


@dataclass
class Shapes:
    """What the lowering needs from a binding: tensor shapes (as polynomials in the scalar
    parameters), the launch grid (polynomials) and block (ints), and numeric test points."""

    tensors: dict  # name -> tuple[Poly, ...]
    grid: tuple  # (Poly, Poly, Poly)
    block: tuple  # (int, int, int)
    points: list  # list of {param: number}
    ranges: dict = dataclasses.field(default_factory=dict)  # index tensor -> (lo, hi) Polys


def poly_of_text(text: str | int) -> Poly:
    """A binding size expression (C integer semantics: ``/`` truncates; ``ceil_div``) as Poly."""
    if isinstance(text, int):
        return Poly.const(text)
    try:
        tree = ast.parse(str(text).strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"bad size expression {text!r}") from exc
    return _poly_ast(tree)


def _poly_ast(n: ast.AST) -> Poly:
    if isinstance(n, ast.Constant) and isinstance(n.value, int):
        return Poly.const(n.value)
    if isinstance(n, ast.Name):
        return af.sym(n.id)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return -_poly_ast(n.operand)
    if isinstance(n, ast.BinOp):
        a, b = _poly_ast(n.left), _poly_ast(n.right)
        if isinstance(n.op, ast.Add):
            return a + b
        if isinstance(n.op, ast.Sub):
            return a - b
        if isinstance(n.op, ast.Mult):
            return a * b
        if isinstance(n.op, (ast.Div, ast.FloorDiv)):
            return af.floordiv(a, b)
        if isinstance(n.op, ast.Mod):
            return af.mod(a, b)
    if (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "ceil_div"
        and len(n.args) == 2
    ):
        a, b = _poly_ast(n.args[0]), _poly_ast(n.args[1])
        return af.floordiv(a + b - 1, b)
    capped = capped_text(n) if isinstance(n, ast.expr) else None
    if capped is not None:  # `min(cap, ceil_div(n, b))` blocks: one size atom (lift.capped)
        a, b = (_poly_ast(x) for x in n.args)  # type: ignore[attr-defined]
        return a if a == b else Poly.atom(capped)
    raise ValueError(f"unsupported size expression {ast.unparse(n)!r}")


# --------------------------------------------------------------------------- Poly -> SizeExpr


class Namer:
    """Maps analysis atoms to IR symbol names."""

    def __init__(self, shapes: Shapes):
        self.shapes = shapes
        self.names: dict = {}

    def axis(self, atom: str) -> str:
        if atom not in self.names:
            used = set(self.names.values())
            for n in itertools.chain(_AXIS_NAMES, (f"a{k}" for k in itertools.count())):
                if n not in used and n not in self.shapes.points[0]:
                    self.names[atom] = n
                    break
        return self.names[atom]

    def size(self, p: Poly, conv=None) -> N.SizeExpr:
        out: N.SizeExpr | None = None
        for m, c in p.terms:
            t: N.SizeExpr | None = None
            for a in m:
                x = self.atom(a, conv)
                t = x if t is None else N.Mul(t, x)
            if t is None:
                t = N.Const(c)
            elif c == -1 and out is not None:
                out = N.Sub(out, t)
                continue
            elif c != 1:
                if c < 0 and out is not None:
                    out = N.Sub(out, N.Mul(N.Const(-c), t))
                    continue
                t = N.Mul(N.Const(c), t)
            out = t if out is None else N.Add(out, t)
        return out if out is not None else N.Const(0)

    def atom(self, a: af.Atom, conv) -> N.SizeExpr:
        if isinstance(a, af.DivAtom):
            return N.FloorDiv(self.size(a.num, conv), self.size(a.den, conv))
        if isinstance(a, af.ModAtom):
            return N.Mod(self.size(a.num, conv), self.size(a.den, conv))
        if isinstance(a, af.OpaqueAtom):
            if conv is None or not isinstance(a.payload, V.DExpr):
                raise Refusal("C2N2013", None, what=f"index value {a.key}")
            return N.Dyn(conv(a.payload))
        if a in self.names:
            return N.Sym(self.names[a])
        if is_capped(a):  # a capped grid: the port computes min(cap, count) from its sizes
            x, y = (self.size(_poly_ast(e), conv) for e in capped_args(a))
            return N.Min(x, y)
        if a.startswith(("threadIdx.", "blockIdx.", "gid.", "%", "w:")):
            raise Refusal("C2N2013", None, what=f"'{a}' left in an index after lowering")
        return N.Sym(a)


# --------------------------------------------------------------------------- iteration axes


@dataclass
class Axis:
    atom: str
    extent: Poly


def _shape_str(shape: tuple) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"
