"""The spelling of a CUDA math call the literal lowering looks up in its tables.

CUDA's C++ overloads (``cos(x)``, ``pow(x, y)``, ``ceil(x)``) and fast-math intrinsics
(``__powf``, ``__saturatef``) compute the same function as the ``f``-suffixed C spelling the
tables name (``cosf``, ``powf``, ``ceilf``).  A call whose result is ``float`` is looked up under
that spelling; one whose result is ``double`` too, the lowering's doubles being computed in fp32
(as ``sqrt`` and ``exp`` on doubles always were).
"""

from __future__ import annotations

from collections.abc import Collection

from cuda2nki.frontend import ast as A

#: intrinsics whose plain C spelling differs from the ``__`` name with its suffix dropped
_ALIASES = {"__fsqrt_rn": "sqrtf", "__frsqrt_rn": "rsqrtf", "__fdiv_rn": "__fdividef"}


def literal_name(func: str, ty: object, known: Collection[str]) -> str:
    """``func`` as one of the ``known`` table spellings, when a floating-point call has one;
    else ``func`` unchanged."""
    if func in known or not (isinstance(ty, A.ScalarType) and ty.is_float):
        return func
    if func in _ALIASES:
        return _ALIASES[func]
    base = func[2:] if func.startswith("__") else func
    for cand in (base, base + "f"):
        if cand in known:
            return cand
    return func
