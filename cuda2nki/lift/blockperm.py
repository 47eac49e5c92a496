"""Block reindexing that only permutes the blocks is dropped (an AST rewrite before the lift).

Some kernels renumber their blocks before doing anything else -- the diagonal reordering of a
tiled transpose spreads the blocks running at once over memory partitions::

    if (width == height) { by = blockIdx.x; bx = (blockIdx.x + blockIdx.y) % gridDim.x; }
    else { int b = blockIdx.x + gridDim.x * blockIdx.y;
           by = b % gridDim.y; bx = (b / gridDim.y + by) % gridDim.x; }

and use ``bx``, ``by`` wherever ``blockIdx`` would be.  When the map from ``blockIdx`` to the
new numbers is a bijection of the launch grid, every block's work is still done exactly once, by
another block; since CUDA runs blocks in no defined order the result is that of the kernel with
``bx = blockIdx.x, by = blockIdx.y``, which the recognisers understand.

The rewrite applies when the kernel body starts with statements computing block numbers: local
integer declarations and assignments from ``blockIdx``, ``gridDim``, integer scalar parameters,
literals and earlier such locals, possibly under ``if``/``else`` on a condition of parameters and
``gridDim``; ``blockIdx`` appears nowhere after them, and the locals read after them are never
assigned again.  Bijectivity is checked by evaluating the numbering (C integer semantics) over
every block of the launch grid at each test point of the binding: each new number must lie in
its grid dimension and no two blocks may share a tuple.  A numbering that fails anywhere is left
alone (the lift then treats it as an index it cannot follow, and the port is literal).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_DIMS = "xyz"
#: most blocks enumerated per test point
_MAX_BLOCKS = 1 << 20


def unpermuted_blocks(
    fn: A.Function, grid: Sequence[Any], points: Sequence[Mapping[str, Any]]
) -> A.Function:
    """``fn`` with a bijective renumbering of its blocks replaced by ``blockIdx`` itself."""
    if fn.body is None:
        return fn
    scalars = {p.name for p in fn.params if isinstance(p.ty, A.ScalarType) and not p.ty.is_float}
    body = fn.body.body
    k = _prefix_length(body, scalars)
    if k == 0:
        return fn
    prefix = body[:k]
    rest = tuple(s for s in prefix if isinstance(s, A.VarDecl) and s.storage != "local") + body[k:]
    if any(
        isinstance(n, A.Builtin) and n.name == "blockIdx"
        for n in walk(A.Block(loc=fn.body.loc, body=rest))
    ):
        return fn
    locals_ = _declared(prefix)
    used = {n.name for s in rest for n in walk(s) if isinstance(n, A.Name) and n.name in locals_}
    if not used or any(_assigns(s, used) for s in rest) or used & _declared(rest):
        return fn  # changed later, or a name declared again (shadowed) further on
    dims = _dims_read(prefix)
    outs = sorted(used)
    if len(outs) != len(dims):
        return fn
    for order in itertools.permutations(dims):
        pairing = dict(zip(outs, order))
        if _bijective(prefix, pairing, grid, points):
            return dataclasses.replace(
                fn, body=dataclasses.replace(fn.body, body=_substitute(rest, pairing))
            )
    return fn


# ---------------------------------------------------------------------- the block-number prefix
def _prefix_length(body: Sequence[A.Stmt], scalars: set[str]) -> int:
    known: set[str] = set()
    k = 0
    for s in body:
        if not _block_level_stmt(s, scalars, known):
            break
        k += 1
    return k if any(_reads_block(s) for s in body[:k]) else 0


def _block_level_stmt(s: A.Stmt, scalars: set[str], known: set[str]) -> bool:
    if isinstance(s, A.VarDecl) and s.storage in ("shared", "extern_shared") and s.init is None:
        return True  # a shared array declared among them
    if isinstance(s, A.VarDecl):
        ok = isinstance(s.ty, A.ScalarType) and not s.ty.is_float and s.storage == "local"
        ok = ok and (s.init is None or _block_level(s.init, scalars, known))
        if ok:
            known.add(s.name)
        return ok
    if isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Assign) and s.expr.op == "=":
        t = s.expr.target
        return (
            isinstance(t, A.Name) and t.name in known and _block_level(s.expr.value, scalars, known)
        )
    if isinstance(s, A.Block):
        inner = set(known)
        ok = all(_block_level_stmt(x, scalars, inner) for x in s.body)
        return ok and not (inner - known - _declared(s.body))
    if isinstance(s, A.If):
        if not _block_level(s.cond, scalars, set(), blocks=False):
            return False
        arms = [s.then] + ([s.else_] if s.else_ is not None else [])
        return all(_block_level_stmt(a, scalars, set(known)) for a in arms)
    return False


def _block_level(e: A.Expr, scalars: set[str], known: set[str], blocks: bool = True) -> bool:
    for n in walk(e):
        if isinstance(n, A.Name):
            if n.name not in scalars and n.name not in known:
                return False
        elif isinstance(n, A.Builtin):
            if n.name != "gridDim" and not (blocks and n.name == "blockIdx"):
                return False
        elif isinstance(n, A.Binary):
            if n.op not in ("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"):
                return False
        elif not isinstance(n, A.IntLit | A.Cast | A.Unary) or (
            isinstance(n, A.Unary) and n.op not in ("-", "+", "!")
        ):
            return False
    return True


def _reads_block(s: A.Stmt) -> bool:
    return any(isinstance(n, A.Builtin) and n.name == "blockIdx" for n in walk(s))


def _declared(stmts: Sequence[A.Stmt]) -> set[str]:
    """The local (not shared) variables declared in ``stmts``."""
    return {
        n.name for s in stmts for n in walk(s) if isinstance(n, A.VarDecl) and n.storage == "local"
    }


def _assigns(s: A.Stmt, names: set[str]) -> bool:
    for n in walk(s):
        if isinstance(n, A.Assign) and isinstance(n.target, A.Name) and n.target.name in names:
            return True
        if isinstance(n, A.Unary) and n.op.endswith(("++", "--")):
            if isinstance(n.operand, A.Name) and n.operand.name in names:
                return True
        if isinstance(n, A.Unary) and n.op == "&" and isinstance(n.operand, A.Name):
            if n.operand.name in names:
                return True
    return False


def _dims_read(prefix: Sequence[A.Stmt]) -> list[str]:
    return sorted(
        {
            n.dim
            for s in prefix
            for n in walk(s)
            if isinstance(n, A.Builtin) and n.name == "blockIdx"
        }
    )


# ---------------------------------------------------------------------- the bijection check
def _bijective(
    prefix: Sequence[A.Stmt],
    pairing: Mapping[str, str],
    grid: Sequence[Any],
    points: Sequence[Mapping[str, Any]],
) -> bool:
    wide: set[str] = set()  # renumbered dims seen with two or more blocks
    checked = 0
    for point in _with_larger(points):
        try:
            extents = [int(g.evaluate(point)) if hasattr(g, "evaluate") else int(g) for g in grid]
        except Exception:  # noqa: BLE001 - a size this point does not give
            continue
        extents = (extents + [1, 1, 1])[:3]
        total = int(np.prod(extents))
        if total <= 0 or total > _MAX_BLOCKS:
            continue
        ids = np.indices(extents[::-1]).reshape(3, -1)[::-1]  # x fastest
        env: dict[str, Any] = {k: np.int64(v) for k, v in point.items() if isinstance(v, int)}
        ev = _Eval(env, {d: ids[k] for k, d in enumerate(_DIMS)}, dict(zip(_DIMS, extents)), total)
        try:
            for s in prefix:
                ev.stmt(s, np.ones(total, dtype=bool))
        except _Unknown:
            return False
        coords = []
        for name, d in pairing.items():
            v = ev.env.get(name)
            if v is None:
                return False
            v = np.broadcast_to(np.asarray(v, dtype=np.int64), (total,))
            if (v < 0).any() or (v >= extents[_DIMS.index(d)]).any():
                return False
            coords.append(v)
        flat = np.zeros(total, dtype=np.int64)
        for name, v in zip(pairing, coords):
            flat = flat * extents[_DIMS.index(pairing[name])] + v
        if len(np.unique(flat)) != total:
            return False
        checked += 1
        wide |= {d for d in pairing.values() if extents[_DIMS.index(d)] >= 2}
    # a grid of one block along a dimension proves nothing about it (``start = 256 *
    # blockIdx.x`` is 0 there, which would pass for ``blockIdx.x`` itself)
    return checked > 0 and wide >= set(pairing.values())


#: factors by which the sizes of a test point are scaled for further points
_SCALES = (4, 16)


def _with_larger(points: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The test points, then each with its positive integer sizes scaled up, so a point whose
    grid has one block along a dimension is followed by points that have several."""
    out = list(points)
    for k in _SCALES:
        for point in points:
            out.append(
                {
                    n: v * k if isinstance(v, int) and not isinstance(v, bool) and v > 0 else v
                    for n, v in point.items()
                }
            )
    return out


class _Unknown(Exception):
    pass


@dataclasses.dataclass
class _Eval:
    env: dict[str, Any]
    block: dict[str, Any]
    grid: dict[str, int]
    total: int

    def stmt(self, s: A.Stmt, mask: np.ndarray) -> None:
        if isinstance(s, A.VarDecl):
            if s.init is not None:
                self.env[s.name] = self.expr(s.init)
            else:
                self.env.setdefault(s.name, np.zeros(self.total, dtype=np.int64))
        elif isinstance(s, A.ExprStmt):
            t = s.expr.target  # an ``=`` assignment to a known local (see _block_level_stmt)
            old = np.broadcast_to(np.asarray(self.env.get(t.name, 0), dtype=np.int64), mask.shape)
            self.env[t.name] = np.where(mask, self.expr(s.expr.value), old)
        elif isinstance(s, A.Block):
            for x in s.body:
                self.stmt(x, mask)
        elif isinstance(s, A.If):
            c = np.broadcast_to(np.asarray(self.expr(s.cond), dtype=bool), mask.shape)
            self.stmt(s.then, mask & c)
            if s.else_ is not None:
                self.stmt(s.else_, mask & ~c)

    def expr(self, e: A.Expr) -> Any:  # noqa: PLR0911
        if isinstance(e, A.IntLit):
            return np.int64(e.value)
        if isinstance(e, A.Name):
            if e.name not in self.env:
                raise _Unknown(e.name)
            return self.env[e.name]
        if isinstance(e, A.Builtin):
            if e.name == "blockIdx":
                return self.block[e.dim]
            return np.int64(self.grid[e.dim])
        if isinstance(e, A.Cast):
            return self.expr(e.operand)
        if isinstance(e, A.Unary):
            v = self.expr(e.operand)
            return np.logical_not(v) if e.op == "!" else (-v if e.op == "-" else v)
        if isinstance(e, A.Binary):
            a, b = self.expr(e.left), self.expr(e.right)
            return _binary(e.op, np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        raise _Unknown(type(e).__name__)


def _binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op in ("/", "%"):
        if (b == 0).any():
            raise _Unknown("division by zero")
        q = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)  # C: truncated toward zero
        return q if op == "/" else a - q * b
    fns = {
        "+": np.add, "-": np.subtract, "*": np.multiply, "==": np.equal, "!=": np.not_equal,
        "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "&&": np.logical_and, "||": np.logical_or,
    }  # fmt: skip
    return fns[op](a, b)


# ---------------------------------------------------------------------- the rewrite
def _substitute(stmts: Sequence[A.Stmt], pairing: Mapping[str, str]) -> tuple[A.Stmt, ...]:
    return tuple(_sub(s, pairing) for s in stmts)


def _sub(node: Any, pairing: Mapping[str, str]) -> Any:
    if isinstance(node, A.Name) and node.name in pairing:
        return A.Builtin(loc=node.loc, ty=node.ty, name="blockIdx", dim=pairing[node.name])
    if isinstance(node, tuple):
        new = tuple(_sub(x, pairing) for x in node)
        return new if any(a is not b for a, b in zip(new, node)) else node
    if not isinstance(node, A.Node):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name in ("loc", "ty"):
            continue
        old = getattr(node, f.name)
        new = _sub(old, pairing)
        if new is not old:
            changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node
