"""Bit reinterpretations on tiles (:class:`~cuda2nki.ir.nodes.Bitcast`).

``__float_as_int(x)`` of a tile is a copy of the tile through a dtype view of it
(:class:`~cuda2nki.ir.nodes.TensorBitcast`: ``nisa.tensor_copy(dst, src.view(nl.int32))``, which
the Vector engine makes bit-exactly between equal dtypes).  The source tile must hold the bits
CUDA reinterprets: a float in an fp32 tile, an integer in a 32-bit integer tile (a small integer
computed in fp32 is converted first, exactly).  A literal is reinterpreted when the kernel is
ported.  Only 32-bit types are taken: narrower floats are computed in fp32 on the engines, so
their bits are not in any tile.
"""

from __future__ import annotations

from cuda2nki.ir.bitcast import bits_as
from cuda2nki.ir.nodes import Bitcast, Lit, TensorBitcast, TensorCopy
from cuda2nki.ir.ops import is_float

_WORDS = ("float32", "int32", "uint32")


class BitcastOps:
    """Mixin of :class:`~cuda2nki.passes._tiles.TileExprCompiler`."""

    def bitcast(self, e: Bitcast):  # noqa: ANN201  (a _tiles.Val)
        from cuda2nki.passes._tiles import IMM, Unsupported, Val

        source = self.type_of(e.x)  # type: ignore[attr-defined]
        if source not in _WORDS or e.dtype not in _WORDS:
            raise Unsupported(f"the bits of a '{source}' read as a '{e.dtype}'", e.loc)
        v = self.compile(e.x)  # type: ignore[attr-defined]
        if v.kind == IMM and isinstance(v.operand, Lit):
            bits = bits_as(v.operand.value, source, e.dtype).item()
            if is_float(e.dtype):
                return Val(IMM, Lit(float(bits), "float32"), e.dtype)
            return Val(IMM, Lit(int(bits), e.dtype), e.dtype, int(bits), int(bits))
        src = self._bit_source(v, source)
        dst = self.tile("bits", src.kind, e.dtype)  # type: ignore[attr-defined]
        self.b.emit(TensorBitcast(dst, src.operand, loc=e.loc))  # type: ignore[attr-defined]
        return Val(src.kind, dst, e.dtype)

    def _bit_source(self, v, source: str):  # noqa: ANN001, ANN202
        """``v`` in a tile of ``source``'s storage type: the bits to reinterpret."""
        from cuda2nki.passes._tiles import IMM, Val

        if not is_float(source):
            return self.as_int(v, source)  # type: ignore[attr-defined]
        if v.kind == IMM:
            v = self.materialize_row(v)  # type: ignore[attr-defined]
        if self.storage(v) == "float32":  # type: ignore[attr-defined]
            return v
        dst = self.tile("fval", v.kind, "float32")  # type: ignore[attr-defined]
        self.b.emit(TensorCopy(dst, v.operand, loc=self.loc))  # type: ignore[attr-defined]
        return Val(v.kind, dst, "float32")


__all__ = ["BitcastOps"]
