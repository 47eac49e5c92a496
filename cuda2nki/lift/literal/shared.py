"""Names the literal lowering's parts share: per-point scope, name bindings, the tables of
CUDA calls it maps, and small classifications of its values."""

from __future__ import annotations

import ast as pyast
import keyword
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import (
    DynPtr,
    Idx,
    Lin,
    Local,
    Ptr,
    Tile,
    Uni,
    Value,
    add,
    is_int,
    mul,
)

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer


class LiteralRefusal(Exception):
    """A construct the literal lowering cannot translate faithfully."""

    def __init__(self, construct: str, loc: object) -> None:
        super().__init__(construct)
        self.construct = construct
        self.loc = loc


_MATH1 = {
    "expf": "exp", "__expf": "exp", "exp": "exp", "logf": "log", "__logf": "log", "log": "log",
    "sqrtf": "sqrt", "sqrt": "sqrt", "rsqrtf": "rsqrt", "tanhf": "tanh", "tanh": "tanh",
    "fabsf": "abs", "fabs": "abs", "abs": "abs", "sinf": "sin", "__sinf": "sin", "cosf": "cos",
    "__cosf": "cos", "erff": "erf", "floorf": "floor", "ceilf": "ceil", "expf_": "exp",
    "exp2f": "exp2", "log2f": "log2", "truncf": "trunc",
}  # fmt: skip
_MATH2 = {
    "fmaxf": "maximum", "fminf": "minimum", "max": "maximum", "min": "minimum",
    "fmax": "maximum", "fmin": "minimum", "powf": "power", "__fdividef": "divide",
    "fdividef": "divide",
}  # fmt: skip
_NP1 = {
    "exp": "np.exp", "log": "np.log", "sqrt": "np.sqrt", "tanh": "np.tanh", "abs": "abs",
    "sin": "np.sin", "cos": "np.cos", "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc",
}  # fmt: skip


_NOOP_CALLS = {"__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "assert"}
_CONVERT = {
    "__float2half", "__half2float", "__float2bfloat16", "__bfloat162float", "__float2half_rn",
    "__float2bfloat16_rn", "__int2float_rn", "__uint2float_rn",
}  # fmt: skip


@dataclass
class Scope:
    """What the lowering knows at one point of the per-block program."""

    mask: str | None = None  # the threads executing here (None: all live threads)
    depth: int = 0  # nesting of per-thread conditions (see classify)
    in_varying_loop: bool = False
    np_mask: str | None = None  # the index-only conditions among them, as a trace-time array


@dataclass
class Binding_:
    value: Value
    klass: str  # U L T P A
    depth: int
    ty: str = "float"
    cname: str = ""


_ATOMICS = {"atomicAdd": "add", "atomicSub": "subtract", "atomicMax": "maximum",
            "atomicMin": "minimum"}  # fmt: skip
_SHUFFLES = ("__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "__shfl_sync")


def _kind(v: Value) -> str:
    if isinstance(v, Idx):
        return "int"
    if isinstance(v, Uni | Tile):
        return "float" if v.ty == "float" else "int"
    if isinstance(v, Local | Ptr | DynPtr):
        return v.ty
    return "int"


def _is_scalar(v: Value) -> bool:
    return isinstance(v, Uni) or (isinstance(v, Lin) and v.uniform)


def _is_void(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.name == "void"


def _callee(tu: A.TranslationUnit, name: str) -> A.Function | None:
    for f in tu.functions:
        if f.name == name:
            return f
    return None


_FLOAT_DT = {"float32": "nl.float32", "float16": "nl.float16", "bfloat16": "nl.bfloat16"}
_INT_DT = {
    "int32": "nl.int32",
    "uint32": "nl.uint32",
    "int16": "nl.int16",
    "uint16": "nl.uint16",
    "int8": "nl.int8",
    "uint8": "nl.uint8",
    "bool": "nl.uint8",
}
_BIN = {
    "+": "add", "-": "subtract", "*": "multiply", "/": "divide", "<": "less",
    "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
    "!=": "not_equal", "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor",
    "<<": "left_shift", ">>": "right_shift",
}  # fmt: skip
_CMP = {"<", "<=", ">", ">=", "==", "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_RESERVED = {"nl", "nisa", "np", "nki", "range", "min", "max", "abs", "len"}


def dtype_spelling(name: str) -> str:
    if name in _FLOAT_DT:
        return _FLOAT_DT[name]
    if name in _INT_DT:
        return _INT_DT[name]
    raise KeyError(name)


_BIN_CMP = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"}
_EXACT_INT = {"+", "-", "*", "/", "%", ">>", *_CMP}


def _is_u32(t: object) -> bool:
    return isinstance(t, A.ScalarType) and t.name == "uint32"


def _operands(node: A.Node) -> tuple[A.Expr | None, A.Expr | None]:
    """The CUDA operands of a binary expression or compound assignment (None where unknown)."""
    if isinstance(node, A.Binary):
        return node.left, node.right
    if isinstance(node, A.Assign):
        return node.target, node.value
    return None, None


def _unsigned(node: A.Node) -> bool:
    """Whether C's usual arithmetic conversions make the operation unsigned 32-bit."""
    return any(x is not None and _is_u32(x.ty) for x in _operands(node)) or _is_u32(
        getattr(node, "ty", None)
    )


def _literal_items(init: object) -> list[str] | None:
    """The spelled values of an initialiser list of numeric literals, else None."""
    if not isinstance(init, A.InitList):
        return None
    out = []
    for item in init.items:
        sign = ""
        if isinstance(item, A.Unary) and item.op == "-":
            sign, item = "-", item.operand
        if not isinstance(item, A.IntLit | A.FloatLit):
            return None
        out.append(f"{sign}{item.value!r}")
    return out


def _np_and(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a if b is None else b
    return f"({a} & {b})"


def _prod(xs) -> int:  # noqa: ANN001
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _depth(e: A.Expr) -> int:
    n = 0
    while isinstance(e, A.Index):
        n += 1
        e = e.base
    return n


def _flatten(idx: list[str], dims: tuple[int, ...]) -> str:
    off = "0"
    for k, i in enumerate(idx):
        off = add(off, mul(i, str(_prod(dims[k + 1 :]))))
    return off


def _exact(expr: str, d: int) -> str:
    if is_int(expr):
        return str(int(expr) // d)
    return f"({expr}) // {d}"


def _sizeof(t: object, node: A.Node, low: Lowerer) -> int:
    if isinstance(t, A.ScalarType):
        return max(1, t.bits // 8)
    raise low.refuse("sizeof of a non-scalar type", node)


def _elem_class(t: object, node: A.Node, low: Lowerer) -> str:
    if isinstance(t, A.ScalarType):
        if t.name == "float64":
            raise low.refuse("a double-precision buffer (NKI has no fp64 arithmetic)", node)
        return "float" if t.is_float else "int"
    raise low.refuse("a buffer of vector or class type", node)


def _py(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or name in _RESERVED else name


def _has_continue(s: A.Stmt) -> bool:
    if isinstance(s, A.Continue):
        return True
    if isinstance(s, A.For | A.While | A.DoWhile):
        return False  # a continue in a nested loop belongs to that loop
    for child in _children(s):
        if _has_continue(child):
            return True
    return False


def _children(s: A.Stmt) -> list[A.Stmt]:
    if isinstance(s, A.Block):
        return list(s.body)
    if isinstance(s, A.If):
        return [s.then] + ([s.else_] if s.else_ is not None else [])
    if isinstance(s, A.Switch):
        return [x for c in s.cases for x in c.body]
    if isinstance(s, A.For | A.While | A.DoWhile):
        return [s.body]
    return []


def _has_varying_return(body: A.Stmt, low: Lowerer) -> bool:
    """Whether some return may run under a per-thread condition (conservative: any nested
    return, or any return inside a loop)."""

    def walk(s: A.Stmt, nested: bool) -> bool:
        if isinstance(s, A.Return):
            return nested
        if isinstance(s, A.Block):
            return any(walk(c, nested) for c in s.body)
        return any(walk(c, True) for c in _children(s))

    return walk(body, False)


def _switch_as_if(s: A.Switch, low: Lowerer) -> A.Stmt:
    """``switch`` as an if/else chain (cases ending in ``break``; empty cases fall through)."""
    groups: list[tuple[list[int], bool, tuple[A.Stmt, ...]]] = []
    pending: list[int] = []
    pending_default = False
    for c in s.cases:
        if not c.values:
            pending_default = True
        pending.extend(c.values)
        if not c.body:
            continue
        body = c.body
        if isinstance(body[-1], A.Break):
            body = body[:-1]
        elif c is not s.cases[-1]:
            raise low.refuse("a switch case that falls through into the next", c)
        if any(_has_break(x) for x in body):
            raise low.refuse("a break inside a switch case body", c)
        groups.append((pending, pending_default, body))
        pending, pending_default = [], False
    default = next((g for g in groups if g[1]), None)
    chain: A.Stmt | None = (
        A.Block(loc=s.loc, body=default[2]) if default is not None and default[2] else None
    )
    int_t = A.ScalarType(name="int32")
    bool_t = A.ScalarType(name="bool")
    for values, is_default, body in reversed(groups):
        if is_default:
            continue
        cond: A.Expr | None = None
        for v in values:
            test = A.Binary(loc=s.loc, op="==", left=s.cond,
                            right=A.IntLit(loc=s.loc, value=v, ty=int_t), ty=bool_t)  # fmt: skip
            cond = test if cond is None else A.Binary(
                loc=s.loc, op="||", left=cond, right=test, ty=bool_t)  # fmt: skip
        if cond is None:
            continue
        chain = A.If(loc=s.loc, cond=cond, then=A.Block(loc=s.loc, body=body), else_=chain)
    return chain if chain is not None else A.Empty(loc=s.loc)


def _has_break(s: A.Stmt) -> bool:
    if isinstance(s, A.Break):
        return True
    if isinstance(s, A.For | A.While | A.DoWhile | A.Switch):
        return False
    return any(_has_break(c) for c in _children(s))


# --------------------------------------------------------------------------- binding expressions


#: functions a binding's size expressions may call that Python has under the same name
_BINDING_FUNCS = frozenset({"min", "max", "int", "float"})


class _CToPy(pyast.NodeTransformer):
    def visit_BinOp(self, node: pyast.BinOp) -> pyast.AST:  # noqa: N802
        self.generic_visit(node)
        helper = {pyast.Div: "_c2n_idiv", pyast.Mod: "_c2n_imod"}.get(type(node.op))
        if helper is None:
            return node
        return pyast.Call(pyast.Name(helper, pyast.Load()), [node.left, node.right], [])

    def visit_Call(self, node: pyast.Call) -> pyast.AST:  # noqa: N802
        # the functions of a binding's expressions (cuda2nki.binding) are Python's own, under
        # their own names: only their arguments are renamed (a size called `min` would be)
        node.args = [self.visit(a) for a in node.args]
        if isinstance(node.func, pyast.Name) and node.func.id == "ceil_div":
            node.func = pyast.Name("_c2n_ceil_div", pyast.Load())
        elif not (isinstance(node.func, pyast.Name) and node.func.id in _BINDING_FUNCS):
            node.func = self.visit(node.func)
        return node

    def visit_Name(self, node: pyast.Name) -> pyast.AST:  # noqa: N802
        if node.id.startswith("_c2n_"):
            return node
        return pyast.Name(_py(node.id), node.ctx)


def c_expr_to_py(text: str) -> str:
    """A binding's C expression (``ceil_div(N, 256)``, ``n / 2``) as Python with C semantics."""
    tree = pyast.parse(text.strip(), mode="eval")
    return pyast.unparse(_CToPy().visit(tree))


def _int_literal(expr: str) -> int | None:
    """The value of an integer literal spelled as ``expr`` (``32``, ``-4``, ``(0)``), else None."""
    text = expr.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    try:
        return int(text, 10)
    except ValueError:
        return None
