"""The extent of a texture reference bound to linear memory, when the host says it.

``cudaBindTexture(0, ref, ptr, n * sizeof(T))`` (or with a channel descriptor before the size)
binds ``n`` texels of type ``T``, and a kernel launched with ``n`` among its arguments reads that
texture as ``n`` elements: the texture's width is then that kernel parameter, not a size of its
own.  Without the tie, ``check`` chooses the texture's width apart from the launch, and at points
where it is shorter the CUDA kernel reads zeros (``tex1Dfetch`` out of range) while no port can
know to: a size relation the host code states was lost.  Only this spelling is followed (the
byte count a product of one name and ``sizeof`` of the texel type the reference declares, the
name passed whole to the kernel at every launch); anything else keeps the texture's own size
parameter."""

from __future__ import annotations

import re

from cuda2nki.frontend import ast as A

_COUNT = re.compile(
    r"^\(?\s*(?:\(?\s*(?P<a>[A-Za-z_]\w*)\s*\)?\s*\*\s*sizeof\s*\(\s*(?P<ta>[\w\s:]+?)\s*\)"
    r"|sizeof\s*\(\s*(?P<tb>[\w\s:]+?)\s*\)\s*\*\s*\(?\s*(?P<b>[A-Za-z_]\w*)\s*\)?)\s*\)?$"
)
_CALL = re.compile(r"cudaBindTexture\s*\(")


def bound_width(ref: str, source: str, fn: A.Function, sites: list[A.LaunchSite]) -> str | None:
    """The kernel parameter of ``fn`` that holds the texel count ``cudaBindTexture`` binds
    reference ``ref`` to, or None."""
    texel = re.search(rf"\btexture\s*<\s*([\w\s:]+?)\s*[,>][^;]*\b{re.escape(ref)}\s*;", source)
    counts = {c for c in _bound_counts(ref, source) if c is not None}
    if texel is None or len(counts) != 1:
        return None
    m = _COUNT.match(counts.pop())
    if m is None or " ".join((m.group("ta") or m.group("tb")).split()) != texel.group(1):
        return None
    host = m.group("a") or m.group("b")
    params = [p.name for p in fn.params]
    got = set()
    for s in (s for s in sites if (s.instance or s.kernel) == fn.name):
        hits = [params[i] for i, t in enumerate(s.arg_texts[: len(params)]) if t.strip() == host]
        if len(hits) != 1:
            return None
        got.add(hits[0])
    return got.pop() if len(got) == 1 else None


def _bound_counts(ref: str, source: str) -> list[str | None]:
    """The byte count (last argument) of each ``cudaBindTexture`` call that binds ``ref``."""
    out: list[str | None] = []
    for m in _CALL.finditer(source):
        args = _arguments(source, m.end())
        if args is not None and len(args) in (4, 5) and args[1].lstrip("&").strip() == ref:
            out.append(args[-1])
    return out


def _arguments(text: str, start: int) -> list[str] | None:
    """The top-level comma-separated arguments of the call whose ``(`` ends at ``start``."""
    depth, cur, out = 0, [], []
    for ch in text[start : start + 2000]:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                out.append("".join(cur).strip())
                return out
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    return None
