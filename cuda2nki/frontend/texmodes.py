"""The addressing and filtering mode of a texture object, read from the host code.

The host fixes a texture's mode in a ``cudaTextureDesc`` that it passes to
``cudaCreateTextureObject(&obj, &resDesc, &texDesc, ...)``; a kernel receives ``obj``.  For a
kernel's texture parameter the launch site names the host object; its creation names the
descriptor, and the descriptor's member assignments (``td.filterMode = cudaFilterModeLinear``,
``td.addressMode[1] = cudaAddressModeBorder``, ``td.normalizedCoords = true``,
``td.readMode = ...``) give the mode.  A descriptor is zero-initialised in practice
(``= {}``, ``memset``): an unset member is 0, which is point filtering, unnormalised
coordinates, element-type reads and *wrap* addressing.  When the object or its descriptor cannot
be followed (a launcher's parameter, several descriptors, a member set from a variable), the
read is taken as point-filtered, clamped and unnormalised, and a note says so.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import named_type

ADDRESS_MODES = ("wrap", "clamp", "mirror", "border")
#: element types a texture read may return, as their C spelling
C_NAMES = {
    "float32": "float",
    "int32": "int",
    "uint32": "unsigned int",
    "int16": "short",
    "uint16": "unsigned short",
    "int8": "signed char",
    "uint8": "unsigned char",
}

_CREATE = re.compile(
    r"cudaCreateTextureObject\s*\(\s*&\s*([\w.\[\]>-]+?)\s*,\s*&?\s*[\w.]+\s*,\s*&\s*(\w+)"
)
_MEMBER = (
    r"\b{var}\s*\.\s*(filterMode|normalizedCoords|normalized|readMode|addressMode\s*\[\s*(\d)\s*\])"
    r"\s*=\s*([^;]+);"
)


@dataclass(frozen=True)
class TextureModes:
    filter: str = "point"  # point | linear
    normalized: bool = False
    address: tuple[str, str, str] = ("clamp", "clamp", "clamp")
    read: str = "element"  # element | normalized

    def unsupported(self, elem: A.ScalarType | A.VectorType, coords: int) -> str | None:
        """What keeps a fetch of texels of type ``elem`` with ``coords`` coordinates under
        these modes from being modelled, or None."""
        base = elem.base if isinstance(elem, A.VectorType) else elem
        if base.name not in C_NAMES:
            return f"element type {elem.name}"
        if self.read == "normalized" and base.name not in NORMALISED_TYPES:
            return f"cudaReadModeNormalizedFloat reads of {elem.name} texels"
        if coords == 0:  # tex1Dfetch: linear memory, no filtering, no addressing
            return None
        if self.filter == "linear" and not base.is_float and self.read != "normalized":
            return f"linear filtering of {elem.name} texels"
        return None

    def describe(self, coords: int) -> str:
        axes = "/".join(self.address[: max(coords, 1)])
        coord = "normalised" if self.normalized else "unnormalised"
        return f"{self.filter} filtering, {coord} coordinates, {axes} addressing"


#: integer texel types that ``cudaReadModeNormalizedFloat`` reads as floats
NORMALISED_TYPES = ("uint8", "int8", "uint16", "int16")

_CHANNEL_T = re.compile(r"cudaCreateChannelDesc\s*<\s*([\w\s]+?)\s*>\s*\(")
_CHANNEL_BITS = re.compile(
    r"cudaCreateChannelDesc\s*\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,"
    r"\s*cudaChannelFormatKind(Signed|Unsigned|Float)\s*\)"
)
_BITS_NAMES = {
    ("Unsigned", 8): "uchar",
    ("Signed", 8): "char",
    ("Unsigned", 16): "ushort",
    ("Signed", 16): "short",
    ("Unsigned", 32): "uint",
    ("Signed", 32): "int",
    ("Float", 32): "float",
}


def texel_type(
    modes: TextureModes,
    fetched: A.ScalarType | A.VectorType,
    result: A.CType | None,
    legacy: bool,
    source: str,
) -> tuple[A.ScalarType | A.VectorType, TextureModes] | str:
    """The texels' own type and the modes of a fetch returning ``fetched`` (``result``: the
    type a reference's fetch returns), or why the texels' type cannot be known.  A reference
    declares its texel type and read mode; an object read as ``cudaReadModeNormalizedFloat``
    takes its texel type from the host's one ``cudaCreateChannelDesc`` of as many lanes."""
    if legacy:
        if result is not None and result != fetched:
            return fetched, dataclasses.replace(modes, read="normalized")
        return fetched, modes
    if modes.read != "normalized":
        return fetched, modes
    lanes = fetched.width if isinstance(fetched, A.VectorType) else 1
    found = {t for t in _channel_types(source) if _lanes(t) == lanes}
    if len(found) != 1:
        return "cudaReadModeNormalizedFloat reads (no one cudaCreateChannelDesc gives the texels' type)"
    return found.pop(), modes


def _channel_types(source: str) -> list[A.ScalarType | A.VectorType]:
    out = []
    for spelled in _CHANNEL_T.findall(source):
        words = " ".join(spelled.split())
        ty = named_type(_UNSIGNED.get(words, words))
        if isinstance(ty, A.ScalarType | A.VectorType):
            out.append(ty)
    for *bits, kind in _CHANNEL_BITS.findall(source):
        sizes = [int(b) for b in bits if int(b)]
        name = _BITS_NAMES.get((kind, sizes[0])) if sizes and len(set(sizes)) == 1 else None
        if name is not None:
            ty = named_type(name if len(sizes) == 1 else f"{name}{len(sizes)}")
            if isinstance(ty, A.ScalarType | A.VectorType):
                out.append(ty)
    return out


_UNSIGNED = {"unsigned char": "uchar", "unsigned short": "ushort", "unsigned int": "uint"}


def _lanes(ty: A.ScalarType | A.VectorType) -> int:
    return ty.width if isinstance(ty, A.VectorType) else 1


def modes_for(
    fn: A.Function, p: A.Param, tu: A.TranslationUnit, source: str, legacy: bool = False
) -> tuple[TextureModes, Diagnostic]:
    """The mode of kernel ``fn``'s texture parameter ``p`` and a note saying where it came
    from (or that it is the default).  ``legacy``: ``p`` stands for a file-scope reference,
    whose members the host sets directly (``ref.filterMode = ...``, ``ref.normalized``) and
    whose default is clamp addressing."""
    desc, why = (p.name, "") if legacy else _descriptor(fn, p, tu, source)
    coords = 3
    if desc is not None:
        got = _members(desc, source, legacy)
        if isinstance(got, TextureModes):
            what = f"texture '{p.name}' mode ({got.describe(coords)})"
            src = f"the host's texture {'reference' if legacy else 'descriptor'} '{desc}'"
            return got, make("C2N2100", p.loc, what=what, kernel=fn.name, source=src)
        why = got
    modes = TextureModes()
    what = f"texture '{p.name}' mode ({modes.describe(coords)})"
    src = f"a default: {why}"
    return modes, make("C2N2100", p.loc, what=what, kernel=fn.name, source=src)


def _descriptor(
    fn: A.Function, p: A.Param, tu: A.TranslationUnit, source: str
) -> tuple[str | None, str]:
    """The name of the ``cudaTextureDesc`` the host creates ``p``'s object with, or why not."""
    creations = _CREATE.findall(source)
    if not creations:
        return None, "the host code creates no texture object in this file"
    k = [q.name for q in fn.params].index(p.name)
    objs = set()
    for s in tu.launch_sites:
        if (s.instance or s.kernel) != fn.name or k >= len(s.arg_texts):
            continue
        objs.add(_last_name(s.arg_texts[k]))
    descs = {d for obj, d in creations if _last_name(obj) in objs}
    if len(descs) == 1:
        return descs.pop(), ""
    every = {d for _, d in creations}
    if len(every) == 1:
        return every.pop(), ""
    return None, "the texture object's descriptor could not be followed from the launch"


def _last_name(text: str) -> str:
    names = re.findall(r"[A-Za-z_]\w*", text)
    return names[-1] if names else text


def _members(desc: str, source: str, legacy: bool = False) -> TextureModes | str:
    """The modes the assignments to ``desc``'s members give, or why they cannot be read."""
    filt, norm, read = "point", False, "element"
    address = ["clamp" if legacy else "wrap"] * 3
    seen: dict[str, str] = {}
    for m in re.finditer(_MEMBER.format(var=re.escape(desc)), source):
        field, axis, value = m.group(1), m.group(2), m.group(3).strip()
        key = f"addressMode[{axis}]" if axis is not None else field
        if seen.setdefault(key, value) != value:
            return f"'{desc}.{key}' is set to several values"
        if axis is not None:
            mode = _address(value)
            if mode is None or int(axis) > 2:
                return f"'{desc}.{key} = {value}' is not a constant mode"
            address[int(axis)] = mode
        elif field == "filterMode":
            if value not in ("cudaFilterModePoint", "cudaFilterModeLinear"):
                return f"'{desc}.filterMode = {value}' is not a constant mode"
            filt = "linear" if value.endswith("Linear") else "point"
        elif field in ("normalizedCoords", "normalized"):
            if value not in ("true", "false", "1", "0"):
                return f"'{desc}.normalizedCoords = {value}' is not a constant"
            norm = value in ("true", "1")
        else:
            if value not in ("cudaReadModeElementType", "cudaReadModeNormalizedFloat"):
                return f"'{desc}.readMode = {value}' is not a constant mode"
            read = "normalized" if value.endswith("NormalizedFloat") else "element"
    if not norm:  # wrap and mirror need normalised coordinates; otherwise they clamp
        address = [a if a in ("clamp", "border") else "clamp" for a in address]
    return TextureModes(filt, norm, (address[0], address[1], address[2]), read)


def _address(value: str) -> str | None:
    m = re.fullmatch(r"cudaAddressMode(Wrap|Clamp|Mirror|Border)", value)
    return m.group(1).lower() if m else None
