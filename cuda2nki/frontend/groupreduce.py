"""``cg::reduce(tile, v, op)`` with an operation of the program's own.

``cg::reduce(warp, partial, reduce_sum_max_op)`` (llm.c's online softmax) reduces with a
device function: a butterfly over the tile, each step combining a thread's value with the
value of the thread ``offset`` lanes away (``__shfl_xor_sync``), for offsets of half the tile
size down to 1, so that every thread ends with the reduction of the whole tile, as
``cg::reduce`` returns it to all.  The value may be a scalar or a record struct (each member
shuffled).  The steps are a comma expression over two locals declared at the start of the
function (``__red<N>`` and ``__lane<N>``, ``N`` the call's offset in the file).  The operation must be a device function
named directly, taking two values of the type and returning one; a functor object or a lambda
is refused (C2N1029).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

_FULL = 0xFFFFFFFF
_INT = A.ScalarType(name="int32")
_UINT = A.ScalarType(name="uint32")
_LANES = "xyzw"


class GroupReduceLowering(_Base):
    """``cg::reduce`` with a device function: a mixin of
    :class:`cuda2nki.frontend.lower.BodyLowerer`."""

    def user_reduce(self, node: ts.Node, op_node: ts.Node, value: A.Expr, n: int) -> A.Expr:
        """The butterfly reduction of ``value`` over a tile of ``n`` threads with the device
        function ``op_node`` names."""
        name = _text(op_node)
        fi = self._callee(name.split("::")) if op_node.type in _NAMES else None
        ty = unqualified(value.ty)
        if fi is None or not isinstance(ty, A.ScalarType | A.VectorType) or n & (n - 1):
            raise self.fail("C2N1029", op_node, what=f"cg::reduce with '{name}'")
        loc = (node.byte_range, self.placer)
        acc = N.Name(loc=loc, name=f"__red{node.start_byte}", ty=ty)
        other = N.Name(loc=loc, name=f"__lane{node.start_byte}", ty=ty)
        for v in (acc, other):
            self.prologue.append(
                N.VarDecl(loc=loc, name=v.name, ty=ty, init=None, storage="local")  # type: ignore[arg-type]
            )
        steps: list[A.Expr] = [N.Assign(loc=loc, op="=", target=acc, value=value, ty=ty)]
        off = n // 2
        while off >= 1:
            steps.extend(self._shuffled(loc, other, acc, off, n))
            call = self._user_call(node, name, fi, [acc, other], [], [op_node, op_node])
            steps.append(N.Assign(loc=loc, op="=", target=acc, value=call, ty=ty))
            off //= 2
        steps.append(acc)
        return N.Comma(loc=loc, exprs=tuple(steps), ty=ty)

    def _shuffled(self, loc: object, dst: A.Name, src: A.Name, off: int, n: int) -> list[A.Expr]:
        """``dst = src`` of the thread ``off`` lanes away (lane by lane for a record)."""
        lit = lambda v, t=_INT: N.IntLit(loc=loc, value=v, ty=t)  # noqa: E731
        ty = src.ty
        if isinstance(ty, A.ScalarType):
            pairs = [(dst, src)]
        else:
            assert isinstance(ty, A.VectorType)
            base = N.ScalarType(name=ty.base.name)
            pairs = [
                (self._lane(loc, dst, i, base), self._lane(loc, src, i, base))
                for i in range(ty.width)
            ]
        out: list[A.Expr] = []
        for d, s in pairs:
            call = N.Call(
                loc=loc,
                func="__shfl_xor_sync",
                args=(lit(_FULL, _UINT), s, lit(off), lit(n)),
                ty=unqualified(s.ty),
            )
            out.append(N.Assign(loc=loc, op="=", target=d, value=call, ty=unqualified(s.ty)))
        return out

    @staticmethod
    def _lane(loc: object, v: A.Expr, i: int, base: A.ScalarType) -> A.Expr:
        if i < 4:
            return N.Member(loc=loc, base=v, field=_LANES[i], ty=base)
        return N.Index(loc=loc, base=v, index=N.IntLit(loc=loc, value=i, ty=_INT), ty=base)


_NAMES = ("identifier", "qualified_identifier")
