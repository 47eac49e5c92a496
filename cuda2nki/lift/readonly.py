"""Is a pointer parameter only read?  Read from the kernel's syntax, for a pointer whose loads
symbolic execution did not record (a load inside the index of an atomic's target), or from its
type: a pointer to ``const`` data is an input however the kernel reads it."""

from __future__ import annotations

from cuda2nki.diagnostics import make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk

_STEPS = ("pre++", "pre--", "post++", "post--")


def only_read(fn: A.Function, name: str) -> bool:
    """``name`` is used, and never written through, passed to a function, or copied into
    another pointer (which could write through it)."""
    used = False
    for n in walk(fn.body):
        if isinstance(n, A.Name) and n.name == name:
            used = True
        elif isinstance(n, A.Assign) and _points_into(n.target, name):
            return False
        elif isinstance(n, A.Unary) and n.op in _STEPS and _points_into(n.operand, name):
            return False
        elif isinstance(n, A.Call) and any(_aliases(a, name) for a in n.args):
            return False  # an atomic's target, or a device function that may write
        elif isinstance(n, A.VarDecl) and n.init is not None and _aliases(n.init, name):
            if isinstance(n.ty, A.PointerType):
                return False
    return used


def _base(e: A.Expr) -> A.Expr:
    while True:
        if isinstance(e, A.Index):
            e = e.base
        elif isinstance(e, A.Member):
            e = e.base
        elif isinstance(e, A.Cast):
            e = e.operand
        elif isinstance(e, A.Unary) and e.op in ("*", "&"):
            e = e.operand
        elif isinstance(e, A.Binary) and e.op in ("+", "-"):
            e = e.left if _has_pointer(e.left) else e.right
        else:
            return e


def _has_pointer(e: A.Expr) -> bool:
    return isinstance(e.ty, A.PointerType) or not isinstance(e, A.IntLit)


def _points_into(target: A.Expr, name: str) -> bool:
    """The assigned place is memory reached from ``name`` (``p[i]``, ``*(p + i)``), or ``name``
    itself."""
    b = _base(target)
    return isinstance(b, A.Name) and b.name == name


def _aliases(e: A.Expr, name: str) -> bool:
    """``e`` is (an address into) ``name``'s memory, not a value loaded from it."""
    while isinstance(e, A.Cast):
        e = e.operand
    if isinstance(e, A.Name):
        return e.name == name
    if isinstance(e, A.Unary) and e.op == "&":
        return _points_into(e.operand, name)
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        return _aliases(e.left, name) or _aliases(e.right, name)
    return False


def const_pointees(fn: A.Function) -> set[str]:
    """Pointer parameters to ``const`` data (``const Window* w``): the kernel cannot write
    through them, so they are inputs even where no access of theirs was seen (a record read
    field by field in a helper the analysis did not follow)."""
    return {
        p.name
        for p in fn.params
        if isinstance(p.ty, A.PointerType) and getattr(p.ty.pointee, "const", False)
    }


def const_read(p: A.Param, kernel: str, diags: list) -> bool:
    """Whether ``p`` points to ``const`` data (then an input, with a note) where none of its
    accesses was seen (:func:`const_pointees`)."""
    if not isinstance(p.ty, A.PointerType) or not getattr(p.ty.pointee, "const", False):
        return False
    what = f"the role of '{p.name}' (in)"
    why = "its const pointee: the kernel cannot write through it"
    diags.append(make("C2N2100", p.loc, what=what, kernel=kernel, source=why))
    return True
