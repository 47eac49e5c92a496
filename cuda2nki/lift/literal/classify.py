"""Which locals of a kernel are uniform, thread-affine or per-thread tiles (a fixed point).

A local is ``U`` (uniform) while every assignment to it is uniform and happens under the same
(uniform) control as its declaration; ``L`` when the assigned values are also allowed to be affine
in threadIdx (integers only); ``I`` when they are integers computed from indices only (known
when the kernel is traced), also under conditions computed from indices only; ``T`` otherwise.
An assignment made under a condition that depends on data makes the local ``T``: other threads
must keep their value, so it becomes a tile updated with a select.  A return under
such a condition does not: threads that returned never read a local again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.callreasons import HINTS

ORDER = {"U": 0, "L": 1, "I": 2, "T": 3}
_AFFINE_OPS = {"+", "-"}
_CMP = {"<", "<=", ">", ">=", "==", "!="}
#: integer functions of integers: of index values, an index value
INDEX_CALLS = frozenset({"min", "max", "umin", "umax", "__popc", "__ffs", "__clz", "__brev"})


def deeper(depth: tuple[int, int], cond: str) -> tuple[int, int]:
    """The (data, index) nesting inside a construct whose condition is of kind ``cond``."""
    if cond == "U":
        return depth
    if cond == "T":
        return depth[0] + 1, depth[1]
    return depth[0], depth[1] + 1


def join(a: str, b: str) -> str:
    return a if ORDER[a] >= ORDER[b] else b


def is_float(ty: object) -> bool:
    return isinstance(ty, A.ScalarType) and ty.is_float


def is_intlike(ty: object) -> bool:
    return isinstance(ty, A.ScalarType) and not ty.is_float and ty.name != "void"


#: calls whose value comes from memory or other threads (warp exchanges and votes)
_OTHER_THREADS = ("atomic", "__shfl", "__c2n_warp", "__c2n_cub", "__ballot", "__any", "__all",
                  "__activemask", "__lanemask")  # fmt: skip


class Classifier:
    """``classes`` maps a local's name to U/L/T; pointers and arrays are not classified here."""

    def __init__(
        self,
        seeds: Mapping[str, str],
        thread_kind: Callable[[A.Builtin], str],
        callee: Callable[[str], A.Function | None],
    ) -> None:
        self.classes: dict[str, str] = dict(seeds)
        self.decl_depth: dict[str, tuple[int, int]] = {}
        self.thread_kind = thread_kind
        self.callee = callee
        self.changed = False

    def run(self, body: A.Block) -> dict[str, str]:
        for _ in range(50):
            self.changed = False
            self.stmts(body.body, (0, 0))
            if not self.changed:
                break
        return self.classes

    # ------------------------------------------------------------------ statements
    def stmts(self, items: tuple[A.Stmt, ...], depth: tuple[int, int]) -> None:
        for s in items:
            self.stmt(s, depth)

    def stmt(self, s: A.Stmt, depth: tuple[int, int]) -> None:
        if isinstance(s, A.Block):
            self.stmts(s.body, depth)
        elif isinstance(s, A.VarDecl):
            self.decl_depth.setdefault(s.name, depth)
            if isinstance(s.ty, A.ScalarType):
                k = "U" if s.init is None else self.expr(s.init)
                if is_float(s.ty) and k in ("L", "I"):
                    k = "T"
                self.raise_to(s.name, k)
        elif isinstance(s, A.ExprStmt):
            self.expr(s.expr, depth)
        elif isinstance(s, A.If):
            d = deeper(depth, self.expr(s.cond, depth))
            self.stmt(s.then, d)
            if s.else_ is not None:
                self.stmt(s.else_, d)
        elif isinstance(s, A.For):
            self.stmts(s.init, depth)
            kind = "U" if s.cond is None else self.expr(s.cond, depth)
            d = deeper(depth, kind)
            self.stmt(s.body, d)
            if s.step is not None:  # a data-dependent loop steps only the threads still in it
                self.expr(s.step, d if kind == "T" else depth)
        elif isinstance(s, A.While | A.DoWhile):
            d = deeper(depth, self.expr(s.cond, depth))
            self.stmt(s.body, d)
        elif isinstance(s, A.Switch):
            d = deeper(depth, self.expr(s.cond, depth))
            for c in s.cases:
                self.stmts(c.body, d)
        elif isinstance(s, A.Return) and s.value is not None:
            self.expr(s.value, depth)

    def raise_to(self, name: str, k: str) -> None:
        old = self.classes.get(name, "U")
        new = join(old, k)
        if new != old or name not in self.classes:
            self.changed = self.changed or new != old
            self.classes[name] = new

    def assign(self, name: str, k: str, depth: tuple[int, int], ty: object) -> None:
        dd, di = self.decl_depth.get(name, (0, 0))
        if depth[0] > dd:
            k = "T"
        elif depth[1] > di:
            k = join(k, "I")
        if is_float(ty) and k in ("L", "I"):
            k = "T"
        self.raise_to(name, k)

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr, depth: tuple[int, int] = (0, 0)) -> str:  # noqa: PLR0911, PLR0912
        if isinstance(e, A.IntLit | A.FloatLit | A.BoolLit | A.SizeOf):
            return "U"
        if isinstance(e, A.Name):
            return self.classes.get(e.name, "U")
        if isinstance(e, A.Builtin):
            return self.thread_kind(e)
        if isinstance(e, A.Assign):
            k = self.expr(e.value, depth)
            if e.op != "=":
                k = self.binary(e.op[:-1], self.expr(e.target, depth), k, e.ty)
            if isinstance(e.target, A.Name):
                self.assign(e.target.name, k, depth, e.target.ty)
            else:
                self.expr(e.target, depth)
            return k
        if isinstance(e, A.Unary):
            k = self.expr(e.operand, depth)
            if e.op in ("++", "--", "p++", "p--", "++p", "--p") or e.op.endswith(("++", "--")):
                if isinstance(e.operand, A.Name):
                    self.assign(e.operand.name, k, depth, e.operand.ty)
                return k
            if e.op in ("-", "+"):
                return "T" if k in ("L", "I") and is_float(e.ty) else k
            if e.op == "*":
                return "T"
            return "U" if k == "U" else ("T" if k == "T" else "I")
        if isinstance(e, A.Binary):
            return self.binary(e.op, self.expr(e.left, depth), self.expr(e.right, depth), e.ty)
        if isinstance(e, A.Ternary):
            c = self.expr(e.cond, depth)
            k = join(self.expr(e.then, depth), self.expr(e.else_, depth))
            if c == "U":
                return k
            return "T" if c == "T" or is_float(e.ty) else join(k, "I")
        if isinstance(e, A.Cast):
            k = self.expr(e.operand, depth)
            return "T" if k in ("L", "I") and not is_intlike(e.to) else k
        if isinstance(e, A.Call):
            ks = [self.expr(a, depth) for a in e.args]
            if e.target is not None:
                return self.call(e, ks)
            if e.func in HINTS and ks:
                return ks[0]  # a compiler hint: the value itself
            if e.func == "__ldg" or e.func.startswith(_OTHER_THREADS):
                return "T"  # reads memory or other threads' values
            if all(k == "U" for k in ks):
                return "U"
            if e.func in INDEX_CALLS and "T" not in ks and is_intlike(e.ty):
                return "I"
            return "T"
        if isinstance(e, A.Index | A.Member):
            self.expr(e.base, depth)
            if isinstance(e, A.Index):
                self.expr(e.index, depth)
            return "T"
        if isinstance(e, A.Comma):
            ks = [self.expr(x, depth) for x in e.exprs]
            return ks[-1]
        return "T"

    def binary(self, op: str, a: str, b: str, ty: object) -> str:
        if a == "U" and b == "U":
            return "U"
        if "T" in (a, b) or is_float(ty):
            return "T"
        if op in _CMP or op in ("&&", "||"):
            return "I"  # a condition computed from indices only
        if "I" in (a, b):
            return "I"
        if op in _AFFINE_OPS:
            return "L"
        if op == "*" and "U" in (a, b):
            return "L"
        if op in ("/", "%", ">>", "&") and b == "U":
            return "L"  # affine where the division is exact (decided when lowering)
        return "I"

    def call(self, e: A.Call, ks: list[str]) -> str:
        fn = self.callee(e.target or "")
        if fn is None or not fn.body.body:
            return "T"
        last = fn.body.body[-1]
        if len(fn.body.body) == 1 and isinstance(last, A.Return) and last.value is not None:
            inner = Classifier(
                {p.name: k for p, k in zip(fn.params, ks)}, self.thread_kind, self.callee
            )
            inner.decl_depth = {p.name: (0, 0) for p in fn.params}
            return inner.expr(last.value)
        return "T" if any(k != "U" for k in ks) else "T"
