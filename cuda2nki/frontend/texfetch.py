"""The meaning of a filtered texture fetch, written as a CUDA device function.

``tex1Dfetch<T>(tex, i)`` reads element ``i`` of linear memory of ``width`` elements, zero out
of range.  ``tex1D/tex2D/tex3D<T>(tex, x[, y[, z]])`` of a texture of extents ``width[, height[, depth]]``
held row-major in an array ``t`` (CUDA programming guide, texture fetching appendix):

* normalised coordinates are first brought to ``[0, 1)`` by the addressing mode (wrap:
  ``x - floor(x)``; mirror: the same, reflected when ``floor(x)`` is odd) and scaled by the
  extent; unnormalised ones are used as they are;
* point filtering reads texel ``floor(u)``;
* linear filtering reads texels ``i = floor(u - 0.5)`` and ``i + 1`` (per axis) and weighs them
  by ``alpha = frac(u - 0.5)`` held in 9-bit fixed point with 8 fractional bits (rounded to the
  nearest multiple of 1/256, a tie upwards): ``(1 - alpha) T[i] + alpha T[i + 1]``, and the products of such
  weights in 2-D and 3-D;
* a texel index outside the texture is clamped (clamp), taken modulo the extent (wrap),
  reflected (mirror), or reads zero (border).

A texel of a vector type (``float4``, ``uchar4``, ``short2``...) is fetched lane by lane with
the same addressing and weights, and the function returns the vector.  Under
``cudaReadModeNormalizedFloat`` an 8- or 16-bit integer texel reads as a float (a vector of
floats): unsigned ``v / (2^n - 1)`` in [0, 1], signed ``max(v / (2^(n-1) - 1), -1)`` in
[-1, 1], which linear filtering then weighs as any float.

The device function takes the array, the extents and the coordinates; the interpreter, the
lifter and the port read it as any other device function.  One is built per texel type,
dimensionality and mode, lowered once from the source below.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.texmodes import C_NAMES, TextureModes

_COORDS = ("x", "y", "z")
_SIZES = ("w", "h", "d")


@dataclass(frozen=True)
class FetchShape:
    elem: A.ScalarType | A.VectorType  # the texel's type, as the array holds it
    coords: int  # 0 (tex1Dfetch), 1, 2 or 3
    modes: TextureModes


def fetch_function(shape: FetchShape) -> A.Function:
    """The device function computing a fetch of ``shape`` (see the module doc)."""
    key = (shape.elem.name, shape.coords, shape.modes)
    return _lowered(key)


#: ``cudaReadModeNormalizedFloat``: integer texel type -> (divisor, signed)
NORMALISED = {
    "uint8": ("255.0f", False),
    "int8": ("127.0f", True),
    "uint16": ("65535.0f", False),
    "int16": ("32767.0f", True),
}


@dataclass(frozen=True)
class _Texel:
    """How the generated source spells a texel and its lanes."""

    c_elem: str  # the texel's C type
    c_lane: str  # the C type of one of its lanes
    c_result: str  # the fetch's C result type
    lanes: tuple[str, ...]  # ("",) for a scalar, (".x", ".y", ...) for a vector
    make: str  # the result vector's constructor ("" for a scalar)
    norm: tuple[str, bool] | None  # cudaReadModeNormalizedFloat: (divisor, signed)

    def convert(self, read: str) -> str:
        """One lane as the fetch returns it."""
        if self.norm is None:
            return read
        div, signed = self.norm
        value = f"(float)({read}) / {div}"
        return f"fmaxf({value}, -1.0f)" if signed else value

    def zero(self) -> str:
        return "0.0f" if self.norm is not None else f"({self.c_lane})0"

    def result(self, lanes: list[str]) -> str:
        return lanes[0] if not self.make else f"{self.make}({', '.join(lanes)})"


def _texel_spelling(elem: str, modes: TextureModes) -> _Texel:
    from cuda2nki.frontend.typesys import VECTOR_TYPES

    vec = VECTOR_TYPES.get(elem)
    base = vec.base.name if vec is not None else elem
    norm = NORMALISED.get(base) if modes.read == "normalized" else None
    c_base = C_NAMES[base]
    if vec is None:
        return _Texel(c_base, c_base, "float" if norm else c_base, ("",), "", norm)
    lanes = tuple("." + "xyzw"[k] for k in range(vec.width))
    result = f"float{vec.width}" if norm else elem
    return _Texel(elem, c_base, result, lanes, f"make_{result}", norm)


@functools.lru_cache(maxsize=256)
def _lowered(key: tuple[str, int, TextureModes]) -> A.Function:
    from cuda2nki.frontend.driver import lower_source

    name, source = fetch_source(*key)
    tu = lower_source(source, "<texture fetch>", None, (), None)
    fn = tu.function(name)
    if fn is None:  # pragma: no cover - the generated source always lowers
        raise RuntimeError(f"texture fetch {name} did not lower: {tu.diagnostics}")
    return fn


def helper_name(elem: str, coords: int, modes: TextureModes) -> str:
    read = "_nf" if modes.read == "normalized" else ""
    if coords == 0:
        return f"__c2n_tex1Dfetch_{elem}{read}"
    norm = "norm" if modes.normalized else "unnorm"
    axes = "_".join(modes.address[:coords])
    return f"__c2n_tex{coords}D_{elem}{read}_{modes.filter}_{norm}_{axes}"


def fetch_source(elem: str, coords: int, modes: TextureModes) -> tuple[str, str]:
    """(name, CUDA source) of the device function for a fetch of this kind."""
    name = helper_name(elem, coords, modes)
    tx = _texel_spelling(elem, modes)
    if coords == 0:  # linear memory: a read out of range is zero
        lanes = [
            f"(i >= 0 && i < w) ? {tx.convert(f't[min(max(i, 0), w - 1)]{ln}')} : {tx.zero()}"
            for ln in tx.lanes
        ]
        return name, (
            f"__device__ {tx.c_result} {name}(const {tx.c_elem}* t, int w, int i)\n{{\n"
            f"    return {tx.result(lanes)};\n}}\n"
        )
    sizes = ", ".join(f"int {s}" for s in _SIZES[:coords])
    xs = ", ".join(f"float {c}" for c in _COORDS[:coords])
    lines = [f"__device__ {tx.c_result} {name}(const {tx.c_elem}* t, {sizes}, {xs})", "{"]
    for k in range(coords):
        lines += _texel_coordinate(k, modes)
    if modes.filter == "linear":
        lines += _linear(coords, modes, tx)
    else:
        lines += _point(coords, modes, tx)
    lines.append("}")
    return name, "\n".join(lines) + "\n"


def _texel_coordinate(k: int, modes: TextureModes) -> list[str]:
    """``u<k>``: coordinate ``k`` in texels."""
    c, n, mode = _COORDS[k], _SIZES[k], modes.address[k]
    if not modes.normalized:
        return [f"    float u{k} = {c};"]
    if mode == "wrap":
        return [f"    float u{k} = ({c} - floorf({c})) * (float){n};"]
    if mode == "mirror":
        return [
            f"    float f{k} = floorf({c});",
            f"    float s{k} = (((int)f{k}) & 1) ? 1.0f - ({c} - f{k}) : {c} - f{k};",
            f"    float u{k} = s{k} * (float){n};",
        ]
    return [f"    float u{k} = {c} * (float){n};"]


def _index(i: str, n: str, mode: str) -> str:
    """Texel index ``i`` of an axis of extent ``n`` after addressing (border: clamped here, its
    zero comes from :func:`_inside`)."""
    if mode == "wrap":
        return f"((({i}) % {n}) + {n}) % {n}"
    if mode == "mirror":
        m = f"(((({i}) % (2 * {n})) + 2 * {n}) % (2 * {n}))"
        return f"({m} < {n} ? {m} : 2 * {n} - 1 - {m})"
    return f"min(max({i}, 0), {n} - 1)"


def _inside(idx: list[str], coords: int, modes: TextureModes) -> str | None:
    """The condition that a border-addressed texel lies inside, or None (no border axis)."""
    conds = [
        f"{idx[k]} >= 0 && {idx[k]} < {_SIZES[k]}"
        for k in range(coords)
        if modes.address[k] == "border"
    ]
    return " && ".join(conds) if conds else None


def _texel(idx: list[str], coords: int, modes: TextureModes, tx: _Texel, lane: str) -> str:
    """The value of lane ``lane`` of the texel at raw indices ``idx`` (one per axis)."""
    at = [_index(idx[k], _SIZES[k], modes.address[k]) for k in range(coords)]
    flat = at[0]
    if coords >= 2:
        flat = f"({at[1]}) * w + {flat}"
    if coords == 3:
        flat = f"(({at[2]}) * h + ({at[1]})) * w + {at[0]}"
    read = tx.convert(f"t[{flat}]{lane}")
    inside = _inside(idx, coords, modes)
    return read if inside is None else f"(({inside}) ? {read} : {tx.zero()})"


def _point(coords: int, modes: TextureModes, tx: _Texel) -> list[str]:
    lines = [f"    int i{k} = (int)floorf(u{k});" for k in range(coords)]
    idx = [f"i{k}" for k in range(coords)]
    lanes = [_texel(idx, coords, modes, tx, ln) for ln in tx.lanes]
    return [*lines, f"    return {tx.result(lanes)};"]


def _linear(coords: int, modes: TextureModes, tx: _Texel) -> list[str]:
    lines = []
    for k in range(coords):
        lines += [
            f"    float b{k} = u{k} - 0.5f;",
            f"    float g{k} = floorf(b{k});",
            f"    int i{k} = (int)g{k};",
            f"    float a{k} = floorf((b{k} - g{k}) * 256.0f + 0.5f) * 0.00390625f;",
        ]
    sums = []
    for ln in tx.lanes:
        terms = []
        for corner in range(1 << coords):
            idx, weights = [], []
            for k in range(coords):
                hi = (corner >> k) & 1
                idx.append(f"i{k} + 1" if hi else f"i{k}")
                weights.append(f"a{k}" if hi else f"(1.0f - a{k})")
            terms.append(f"{' * '.join(weights)} * {_texel(idx, coords, modes, tx, ln)}")
        sums.append("\n        + ".join(terms))
    if len(sums) == 1:
        return [*lines, f"    return {sums[0]};"]
    lines += [f"    float l{k} = {v};" for k, v in enumerate(sums)]
    return [*lines, f"    return {tx.result([f'l{k}' for k in range(len(sums))])};"]
