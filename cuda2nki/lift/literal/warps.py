"""The literal lowering, warp shuffles and warp reductions through an exchange buffer."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.helpers import _kind
from cuda2nki.lift.literal.laneshuffle import lane_shuffle
from cuda2nki.lift.literal.program import Instr
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import (
    Lin,
    Tile,
    Uni,
    Value,
    as_lin,
    is_int,
    lin_add,
    lin_scale,
    lin_sub,
    mul,
)
from cuda2nki.lift.literal.votes import is_active_mask


class WarpMixin:
    """Warp shuffles and warp reductions through an exchange buffer.

    A part of :class:`~.lower.Lowerer`, whose fields it uses."""

    # ------------------------------------------------------------------ warp shuffles
    def linear_tid(self) -> Lin:
        return lin_add(self.tx, lin_scale(self.ty_, str(self.block_dims[0])))

    def exchange(self, ty: str) -> str:
        """The scratch buffer through which the threads of a block exchange shuffled values."""
        name = f"_xch_{ty}"
        if name not in self.names:
            self.names.add(name)
            size = str(self.block_dims[0] * self.block_dims[1] * self.block_dims[2])
            dt = "nl.float32" if ty == "float" else "nl.int32"
            self.scratch.append(Instr("scratch", (("dst", name), ("size", size), ("dtype", dt))))
        return name

    def lane_read(self, scr: str, src: Lin, ty: str, line: int) -> str:
        dst = self.fresh("ld")
        self.emit("load", line, dst=dst, tensor=scr, base=src.b, cp=src.p, cf=src.f,
                  dtype=self.dt(ty))  # fmt: skip
        return dst

    def shuffle(self, e: A.Call, scope: Scope) -> Value:
        """Warp shuffles through a scratch buffer: every thread writes its value at its linear
        thread id, then reads the source lane's; a source outside the lane's segment of
        ``width`` lanes keeps the thread's own value (CUDA's rule)."""
        f = e.func
        if f.startswith("__c2n_warp_reduce_"):
            return self.warp_reduce(e, scope)
        args = [
            Uni("0", "int") if k == 0 and is_active_mask(a) else self.expr(a, scope)
            for k, a in enumerate(e.args)
        ]  # the mask does not change the exchange
        if len(args) < 3:
            raise self.refuse(f"{f} with {len(args)} arguments", e)
        v, x = args[1], args[2]
        width = args[3] if len(args) > 3 else Uni("32", "int")
        if not (isinstance(width, Uni) and is_int(width.expr)) or int(width.expr) & (
            int(width.expr) - 1
        ):
            raise self.refuse(f"{f} with a width that is not a constant power of two", e)
        if not isinstance(x, Uni):
            return lane_shuffle(self, f, v, x, int(width.expr), e)  # type: ignore[arg-type]
        return self.shuffle_value(f, v, x, int(width.expr), e)

    def shuffle_value(self, f: str, v: Value, x: Uni, w: int, e: A.Node) -> Value:
        ty = "float" if _kind(v) == "float" else "int"
        vt = self.full_tile(v, ty, e)
        tid = self.linear_tid()
        lane = self.arith("%", tid, Uni(str(w), "int"), A.ScalarType(name="int32"), e)
        scr = self.exchange(ty)
        self.emit("store", e.loc.line, tensor=scr, base=tid.b, cp=tid.p, cf=tid.f, value=vt,
                  mask="None")  # fmt: skip
        line = e.loc.line
        if f == "__shfl_down_sync":
            got = self.lane_read(scr, lin_add(tid, as_lin(x)), ty, line)
            ok = self.arith("<", self.arith("+", lane, x, None, e), Uni(str(w), "int"), None, e)
        elif f == "__shfl_up_sync":
            got = self.lane_read(scr, lin_sub(tid, as_lin(x)), ty, line)
            ok = self.arith(">=", lane, x, None, e)
        elif f == "__shfl_xor_sync":
            # lane ^ m for a power of two m < width: lane + m where bit m of the lane is 0,
            # else lane - m (a mask known only at trace time is checked there)
            if is_int(x.expr):
                m = int(x.expr)
                if m <= 0 or m & (m - 1) or m >= w:
                    raise self.refuse(f"{f} with a lane mask that is not a power of two < {w}", e)
            else:
                self.emit("call", line, expr=f"_c2n_lane_mask({x.expr}, {w})")
            up = self.lane_read(scr, lin_add(tid, as_lin(x)), ty, line)
            down = self.lane_read(scr, lin_sub(tid, as_lin(x)), ty, line)
            two = Uni(mul("2", x.expr), "int")
            bit = self.arith("%", lane, two, A.ScalarType(name="int32"), e)
            low = self.cond_tile(self.arith("<", bit, x, None, e), e)
            name = self.fresh("s")
            self.emit("where", line, dst=name, mask=low, a=up, b=down, dtype=self.dt(ty))
            return Tile(name, ty)
        else:  # __shfl_sync: every lane reads lane x of its segment
            if not isinstance(lane, Lin):
                raise self.refuse(f"{f} in a thread layout where the lane is not affine", e)
            return Tile(self.lane_read(scr, lin_add(lin_sub(tid, lane), as_lin(x)), ty, line), ty)
        ct = self.cond_tile(ok, e)
        name = self.fresh("s")
        self.emit("where", line, dst=name, mask=ct, a=got, b=vt, dtype=self.dt(ty))
        return Tile(name, ty)

    def warp_reduce(self, e: A.Call, scope: Scope) -> Value:
        """``cg::reduce`` over aligned groups of N lanes: a butterfly of xor shuffles."""
        op = e.func.removeprefix("__c2n_warp_reduce_")
        combine = {"add": "+", "max": "max", "min": "min", "and": "&", "or": "|", "xor": "^"}
        if op not in combine or len(e.args) != 2:
            raise self.refuse(f"{e.func}", e)
        v = self.expr(e.args[0], scope)
        n = self.expr(e.args[1], scope)
        if not (isinstance(n, Uni) and is_int(n.expr)):
            raise self.refuse(f"{e.func} over a non-constant group", e)
        m = int(n.expr) // 2
        while m >= 1:
            other = self.shuffle_value("__shfl_xor_sync", v, Uni(str(m), "int"), 32, e)
            if combine[op] in ("max", "min"):
                ty = "float" if _kind(v) == "float" else "int"
                fn = "maximum" if op == "max" else "minimum"
                v = self.op(fn, [self.tile(v, ty, e), self.tile(other, ty, e)], ty)
            else:
                v = self.arith(combine[op], v, other, e.ty, e)
            m //= 2
        return v
