"""The extents of the CUDA array behind a texture or surface object, when the host says them.

A texture or surface object made from a CUDA array has the array's extents::

    cudaMallocArray(&arr, &desc, width, height);               // or cudaMalloc3DArray(&arr,
    res.res.array.array = arr;                                  //   &desc, make_cudaExtent(w, h, d))
    cudaCreateSurfaceObject(&surf, &res);                       // cudaCreateTextureObject(&tex,
    kernel<<<grid, block>>>(data, width, height, surf);         //   &res, &texDesc, NULL)

A kernel launched with those extents among its arguments reads and writes the object within
them: its width and height are then those kernel parameters, not sizes of its own.  Without the
tie, ``check`` chooses the object's extents apart from the launch, and at points where they
differ the CUDA kernel and a port disagree about what lies outside (a surface write past the
array is dropped, a texture read clamps or reads zero) -- a size relation the host code states
was lost.  Only this spelling is followed: one ``cudaCreate*Object`` for the object the kernel
receives, one ``.res.array.array`` assignment of its resource, one allocation of that array,
each extent a name passed whole to the kernel at every launch; anything else keeps the object's
own size parameters.
"""

from __future__ import annotations

import re

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.texbound import _arguments

_CREATE = r"cudaCreate(?:Surface|Texture)Object\s*\(\s*&\s*{obj}\s*,\s*&?\s*([A-Za-z_]\w*)\s*[,)]"
_ARRAY = r"\b{res}\s*\.\s*res\s*\.\s*array\s*\.\s*array\s*=\s*([A-Za-z_]\w*)\s*;"
_ALLOC = re.compile(r"\bcudaMalloc(3D)?Array\s*\(")
_EXTENT = re.compile(r"^make_cudaExtent\s*\((.*)\)$", re.S)


def array_extents(
    param: str, fn: A.Function, source: str, sites: list[A.LaunchSite]
) -> tuple[str | None, ...] | None:
    """Per extent of the CUDA array behind the texture or surface object that ``fn`` receives
    as ``param`` (width first), the kernel parameter that holds it (None where no parameter
    does); None when the host code does not say (see the module doc)."""
    params = [p.name for p in fn.params]
    if param not in params:
        return None
    at = params.index(param)
    objects = set()
    mine = [s for s in sites if (s.instance or s.kernel) == fn.name]
    for s in mine:
        if at >= len(s.arg_texts):
            return None
        objects.add(s.arg_texts[at].strip())
    if len(objects) != 1:
        return None
    (obj,) = objects
    if not re.fullmatch(r"[A-Za-z_]\w*", obj):
        return None
    extents = _allocated(obj, source)
    if extents is None:
        return None
    out = tuple(_passed(e, params, mine) for e in extents)
    return out if any(out) else None


def _one(pattern: str, source: str) -> str | None:
    got = set(re.findall(pattern, source))
    return got.pop() if len(got) == 1 else None


def _allocated(obj: str, source: str) -> list[str] | None:
    """The extent texts (width first) of the one array the object ``obj`` is made from."""
    res = _one(_CREATE.format(obj=re.escape(obj)), source)
    arr = res and _one(_ARRAY.format(res=re.escape(res)), source)
    if not arr:
        return None
    found = []
    for m in _ALLOC.finditer(source):
        args = _arguments(source, m.end())
        if args and args[0].lstrip("&").strip() == arr:
            found.append((bool(m.group(1)), args))
    if len(found) != 1:
        return None
    three_d, args = found[0]
    if not three_d:  # (&arr, &desc, width[, height[, flags]])
        dims = args[2:4]
        return [d for d in dims if d.strip() not in ("0", "")] if dims else None
    if len(args) < 3:
        return None
    m = _EXTENT.match(args[2].strip())
    if m is None:
        ext = _one(
            rf"\b{re.escape(args[2].strip())}\s*=\s*make_cudaExtent\s*\(([^;]*)\)\s*;", source
        )
        if ext is None:
            return None
        inner = ext
    else:
        inner = m.group(1)
    dims = _arguments(inner + ")", 0)
    return [d for d in dims if d.strip() not in ("0", "")] if dims else None


def _passed(text: str, params: list[str], sites: list[A.LaunchSite]) -> str | None:
    """The kernel parameter that every launch passes ``text`` to, whole."""
    text = text.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", text):
        return None
    got = set()
    for s in sites:
        hits = [params[i] for i, t in enumerate(s.arg_texts[: len(params)]) if t.strip() == text]
        if len(hits) != 1:
            return None
        got.add(hits[0])
    return got.pop() if len(got) == 1 else None
