"""Choosing the kernel of a translation unit that a command works on.

A kernel is named by its plain name.  A template kernel instantiated once (from launch sites or
``--template``) keeps its plain name; one instantiated several times (``k<128>`` and ``k<256>``
launched in one file) is a ``Function`` per instantiation named ``k<128>`` / ``k<256>`` (values,
then canonical type names: ``scale<256, float32>``).  The selection accepts that name spelled as
in C++: spaces are free, integers may carry suffixes (``256u``), types may use their C spelling
(``float``, ``__half``, ``unsigned int``), trailing arguments with defaults may be left out when
that leaves one instantiation, and an instantiation name also selects the plain-named kernel of a
single instantiation.  The plain name of a template with several instantiations is ambiguous.
"""

from __future__ import annotations

from typing import Any

from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import TranslationUnit


def select_kernel(tu: TranslationUnit, name: str | None, binding: Any = None) -> str:
    """The kernel to work on: ``name``, else the binding's, else the file's only ``__global__``.
    Returns the name of the ``Function`` in ``tu`` (see the module docstring)."""
    name = name or (binding.kernel if binding else None)
    names = [k.name for k in tu.kernels]
    if name:
        name = name.strip()
        if name in names:
            return name
        if name in tu.rejected:
            raise DiagnosticError(list(tu.rejected[name]))
        got = _instantiation(tu, name)
        if got is not None:
            return got
        base = name.split("<")[0].strip()
        family = [k.name for k in tu.kernels if _base(k) == base]
        family += [r for r in tu.rejected if "<" in r and r.split("<")[0] == base]
        if len(family) > 1:
            reason = (
                f"'{base}' is instantiated {len(family)} times in {tu.file} "
                f"({', '.join(family)}); name one, e.g. --kernel '{family[-1]}'"
            )
            if "<" in name:
                reason = f"no instantiation '{name}': " + reason
            raise _usage(tu, reason)
        rejected = [r for r in tu.rejected if r.split("<")[0] == base]
        if rejected and "<" not in name:
            raise DiagnosticError([d for r in rejected for d in tu.rejected[r]])
        raise _usage(tu, f"no kernel '{name}' in {tu.file}; kernels: {', '.join(names) or 'none'}")
    if len(names) == 1:
        return names[0]
    if not names and tu.rejected:
        raise DiagnosticError([d for ds in tu.rejected.values() for d in ds])
    raise _usage(
        tu,
        f"{tu.file} has {len(names)} kernels ({', '.join(names) or 'none'}); name one with --kernel",
    )


def _usage(tu: TranslationUnit, reason: str) -> DiagnosticError:
    return DiagnosticError(
        make("C2N0002", SourceLoc(tu.file, 1, 1), option="--kernel", reason=reason)
    )


def _base(f: A.Function) -> str:
    return f.name.split("<")[0]


def _instantiation(tu: TranslationUnit, name: str) -> str | None:
    """The kernel whose template arguments ``name`` (``base<args>``) spells, if exactly one."""
    base, lt, rest = name.partition("<")
    if not lt or not rest.rstrip().endswith(">"):
        return None
    want = [_canon_text(a) for a in _split_args(rest.rstrip()[:-1])]
    if want == [""]:
        want = []
    hits = []
    for k in tu.kernels:
        if _base(k) != base.strip() or not k.template_args:
            continue
        have = [_canon_value(v) for _, v in k.template_args]
        if have[: len(want)] == want:
            hits.append(k)
    exact = [k for k in hits if len(k.template_args) == len(want)]
    if len(exact) == 1:
        return exact[0].name
    return hits[0].name if len(hits) == 1 else None


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [a.strip() for a in out]


def _canon_value(v: int | A.CType) -> str:
    from cuda2nki.frontend.typesys import type_str

    return str(v) if isinstance(v, int) else type_str(v).replace(" ", "")


def _canon_text(text: str) -> str:
    """One template argument as typed by a user, in the spelling of :func:`_canon_value`."""
    from cuda2nki.frontend.typesys import int_literal, named_type, type_str

    t = " ".join(text.split())
    if t in ("true", "false"):
        return str(int(t == "true"))
    neg = t.startswith("-")
    got = int_literal(t[1:].strip() if neg else t)
    if got is not None:
        return str(-got[0] if neg else got[0])
    core = t.rstrip("* ")
    ty = named_type(core)
    words = core.split()
    if ty is None and words and set(words) <= _C_TYPE_WORDS:
        from cuda2nki.frontend.lower import BodyLowerer

        ty = BodyLowerer._sized(words)  # unsigned int, long long, unsigned char...
    if ty is None:
        return t.replace(" ", "")
    out: A.CType = ty
    for _ in range(t[len(core) :].count("*")):
        out = A.PointerType(pointee=out)
    return type_str(out).replace(" ", "")


_C_TYPE_WORDS = frozenset("unsigned signed long short int char float double".split())
