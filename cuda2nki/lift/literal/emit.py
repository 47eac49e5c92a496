"""The literal lowering, emission of instructions and the per-thread operands, masks and
conditions."""

from __future__ import annotations

import keyword
import re

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.helpers import _is_scalar
from cuda2nki.lift.literal.program import Instr
from cuda2nki.lift.literal.ptrselect import POINTER_VALUE
from cuda2nki.lift.literal.spelling import (
    _BIN_CMP,
    _RESERVED,
)
from cuda2nki.lift.literal.state import (
    Binding_,
    LiteralRefusal,
    Scope,
)
from cuda2nki.lift.literal.values import (
    Idx,
    Lin,
    Tile,
    Uni,
    Value,
    is_int,
)


class EmitMixin:
    """Emission of instructions and the per-thread operands, masks and conditions.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    # ------------------------------------------------------------------ emission helpers
    def emit(self, kind: str, line: int = 0, **operands: str) -> None:
        self.out[-1].append(Instr(kind, tuple(operands.items()), line))

    def fresh(self, base: str = "t") -> str:
        self.counter += 1
        return f"_{base}{self.counter}"

    def pyname(self, name: str) -> str:
        name = re.sub(r"\W", "_", name)  # an instantiation's name: ``f<1>_result``
        base = name if not keyword.iskeyword(name) and name not in _RESERVED else name + "_"
        cand, k = base, 1
        while cand in self.names:
            k += 1
            cand = f"{base}_{k}"
        self.names.add(cand)
        return cand

    def lookup(self, name: str) -> Binding_ | None:
        for frame in reversed(self.env):
            if name in frame:
                return frame[name]
        return None

    def refuse(self, what: str, node: A.Node) -> LiteralRefusal:
        return LiteralRefusal(what, node.loc)

    def per_thread(self, name: str) -> bool:
        """Whether local ``name`` holds a per-thread tile here."""
        b = self.lookup(name)
        return b is not None and isinstance(b.value, Tile)

    # ------------------------------------------------------------------ per-thread helpers
    def tile(self, v: Value, ty: str | None = None, node: A.Node | None = None) -> str:
        """Spell ``v`` as an operand of an elementwise op (a tile, or a scalar if uniform)."""
        if isinstance(v, Tile) and v.ty == "wide":
            raise self.refuse("a 64-bit integer in an operation with no 64-bit emulation",
                              node or self.fn)  # fmt: skip
        if isinstance(v, Uni):
            if ty == "float" and v.ty != "float":
                return f"np.float32({v.expr})"
            return v.expr
        if isinstance(v, Lin):
            if v.uniform:
                return f"np.float32({v.b})" if ty == "float" else v.b
            name = self.fresh("i")
            dt = "nl.float32" if ty == "float" else "nl.int32"
            self.emit("iota", dst=name, base=v.b, cp=v.p, cf=v.f, dtype=dt)
            return name
        if isinstance(v, Idx):
            name = self.fresh("x")
            # a condition is a 0/1 float mask, unless it takes part in integer arithmetic
            # (C promotes it to int: ``(a > b) * 2 - (i % 3 == 0)``)
            flt = ty == "float" or (v.ty == "bool" and ty != "int")
            dt = "nl.float32" if flt else "nl.int32"
            self.emit("let", dst=name, value=f"_c2n_const({v.expr}, {dt})")
            return name
        if isinstance(v, Tile):
            if ty == "float" and v.ty == "int":
                name = self.fresh("c")
                self.emit("op", dst=name, op="copy", args=v.expr, dtype="nl.float32")
                return name
            if ty == "int" and v.ty == "bool":  # a 0/1 mask in integer arithmetic: an int
                return self.op("copy", [v.expr], "int").expr
            return v.expr
        raise self.refuse(POINTER_VALUE, node or self.fn)

    def full_tile(self, v: Value, ty: str, node: A.Node) -> str:
        s = self.tile(v, ty, node)
        if isinstance(v, Uni) or (isinstance(v, Lin) and v.uniform):
            name = self.fresh("k")
            value = s if ty == "float" or is_int(s) and abs(int(s)) < 2**24 else f"_c2n_u32({s})"
            self.emit("full", dst=name, value=value, dtype=self.dt(ty))
            return name
        return s

    @staticmethod
    def dt(ty: str) -> str:
        if ty in ("wide", "uwide"):  # a 64-bit value reached a 32-bit instruction: never silently
            raise LiteralRefusal("a 64-bit integer in an operation with no 64-bit emulation", None)
        return "nl.int32" if ty == "int" else "nl.float32"

    def op(self, name: str, args: list[str], ty: str) -> Tile:
        dst = self.fresh()
        self.emit("op", dst=dst, op=name, args=", ".join(args), dtype=self.dt(ty))
        return Tile(dst, "bool" if name in _BIN_CMP else ty)

    def mask_and(self, a: str | None, b: str | None) -> str | None:
        if a is None or b is None:
            return a if b is None else b
        out = self.op("multiply", [a, b], "float").expr
        if a in self.exact and b in self.exact:
            self.known_mask(out, f"{self.exact[a]} & {self.exact[b]}")
            if {a, b} & {"_live"} or {self.exact[a], self.exact[b]} & self.live_known:
                self.live_known.add(self.exact[out])
        return out

    def mask_not(self, a: str) -> str:
        out = self.op("subtract", ["1.0", a], "float").expr
        if a in self.exact:
            self.known_mask(out, f"~{self.exact[a]}")
        return out

    def known_mask(self, tile: str, cond: str) -> None:
        """Record that the mask ``tile`` is the per-thread condition ``cond``, known at trace
        time (a snapshot: later changes of the index locals it reads do not reach it)."""
        name = self.fresh("km")
        self.emit("let", dst=name, value=f"_c2n_known({cond})")
        self.exact[tile] = name

    def cond_tile(self, v: Value, node: A.Node) -> str:
        """A 0/1 mask tile for a per-thread condition value."""
        if isinstance(v, Tile) and v.ty == "wide":
            return self.wide_mask(v)  # type: ignore[attr-defined]
        if isinstance(v, Tile) and v.ty == "bool":
            return v.expr
        if isinstance(v, Idx) and v.parts:
            mask = None
            for opname, d in v.parts:
                t = self.tile(d, None, node)
                if isinstance(d, Lin) and d.uniform:  # a counter the threads share: a tile of it
                    t = self.fresh("i")
                    self.emit("iota", dst=t, base=d.b, cp=d.p, cf=d.f, dtype="nl.int32")
                mask = self.mask_and(mask, self.op(opname, [t, "0"], "float").expr)
            if mask is not None and mask not in self.exact:
                self.known_mask(mask, f"{v.expr} != 0")
            return mask  # type: ignore[return-value]
        if isinstance(v, Idx):
            name = self.fresh("m")
            self.emit("let", dst=name, value=f"_c2n_const({v.expr} != 0, nl.float32)")
            self.known_mask(name, f"{v.expr} != 0")
            return name
        if _is_scalar(v):
            return self.full_tile(Uni(f"float(bool({self.tile(v, None, node)}))", "float"),
                                  "float", node)  # fmt: skip
        t = self.tile(v, None, node)
        return self.op("not_equal", [t, "0"], "float").expr

    def store_mask(self, scope: Scope) -> str:
        m = scope.mask
        if self.live:
            m = self.mask_and(m, "_live")
        return "None" if m is None else m
