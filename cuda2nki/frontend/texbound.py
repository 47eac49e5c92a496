"""The extent of a texture reference bound to linear memory, when the host says it.

``cudaBindTexture(0, ref, ptr, n * sizeof(T))`` binds ``n`` texels, and a kernel launched with
``n`` among its arguments reads that texture as ``n`` elements: the texture's width is then that
kernel parameter, not a size of its own.  Without the tie, ``check`` chooses the texture's width
apart from the launch, and at points where it is shorter the CUDA kernel reads zeros
(``tex1Dfetch`` out of range) while no port can know to: a size relation the host code states
was lost.  Only this spelling is followed (the byte count a product of one name and a
``sizeof``, the name passed whole to the kernel at every launch); anything else keeps the
texture's own size parameter."""

from __future__ import annotations

import re

from cuda2nki.frontend import ast as A

_SIZEOF = r"sizeof\s*\(\s*[\w\s:]+\s*\)"
_COUNT = re.compile(
    rf"^\(?\s*(?:(?P<a>[A-Za-z_]\w*)\s*\)?\s*\*\s*{_SIZEOF}|{_SIZEOF}\s*\*\s*\(?\s*(?P<b>[A-Za-z_]\w*)\s*\)?)\s*\)?$"
)


def bound_width(ref: str, source: str, fn: A.Function, sites: list[A.LaunchSite]) -> str | None:
    """The kernel parameter of ``fn`` that holds the texel count ``cudaBindTexture`` binds
    reference ``ref`` to, or None."""
    pat = rf"cudaBindTexture\s*\(\s*[^,]*,\s*&?\s*{re.escape(ref)}\s*,\s*[^,]+,\s*([^;]+?)\)\s*;"
    counts = {m.strip() for m in re.findall(pat, source)}
    if len(counts) != 1:
        return None
    m = _COUNT.match(counts.pop())
    if m is None:
        return None
    host = m.group("a") or m.group("b")
    mine = [s for s in sites if (s.instance or s.kernel) == fn.name]
    params = [p.name for p in fn.params]
    got = set()
    for s in mine:
        hits = [params[i] for i, t in enumerate(s.arg_texts[: len(params)]) if t.strip() == host]
        if len(hits) != 1:
            return None
        got.add(hits[0])
    return got.pop() if len(got) == 1 else None
