"""Device functions an extent scan follows: a kernel that hands its pointer to a ``__device__``
helper (``fill_row(out + r * w, w)``, ``scale(v, n, i)``) has its accesses in the helper.

The helper's body is scanned in place, its pointer parameters aliased to what the kernel passes
(base pointer, element offset, width) and its integer parameters bound to the kernel's values
(a parameter the scan cannot read stays unknown), under the guards in force at the call.  Its
accesses are then the kernel's.  A helper is not followed when it has no body, calls itself
(directly or not), goes deeper than a few calls, only computes an address from a pointer it is
given, or reuses the name of a loop counter that the values passed to it depend on.  A mixin of :class:`cuda2nki.lift.extentscan._Scan`.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import walk
from cuda2nki.lift import affine as af
from cuda2nki.lift.extentaccess import _Opaque
from cuda2nki.lift.extentsyntax import _assign_counts, _branch_assigned, _loop_assigned

#: device functions followed this many calls deep
_MAX_DEPTH = 3


class _Inline:
    """Scanning the body of a device function at its call (see the module)."""

    #: the device function of a name (None: helpers are not followed)
    device: Callable[[str], A.Function | None] | None = None

    def _inline(self, e: A.Call) -> bool:
        """Scan device function ``e.target`` in place at call ``e``; False (nothing scanned)
        when it is not followed."""
        g = self.device(e.target) if self.device is not None and e.target else None
        stack = self.__dict__.setdefault("_inlining", [])
        if g is None or g.body is None or e.target in stack or len(stack) >= _MAX_DEPTH:
            return False
        if len(g.params) != len(e.args):
            return False
        bound = self._bind(g, e)
        if bound is None:
            return False
        alias, env = bound
        names = {p.name for p in g.params} | _declared(g)
        if not self._separate(names, alias, env):
            return False
        saved = (
            self.env,
            self.alias,
            self.assigned,
            self.loop_assigned,
            self.unstable,
            self.scalars,
            self.pointers,
        )
        # the helper sees its parameters only (C scoping): no kernel local or parameter
        self.env, self.alias = env, alias
        self.assigned = _assign_counts(g)
        self.loop_assigned = _loop_assigned(g)
        self.unstable = self.loop_assigned | _branch_assigned(g)
        self.scalars = self.scalars - names
        self.pointers = set()
        stack.append(e.target)
        try:
            self._stmts(g.body.body)
        finally:
            stack.pop()
            (
                self.env,
                self.alias,
                self.assigned,
                self.loop_assigned,
                self.unstable,
                self.scalars,
                self.pointers,
            ) = saved
        return True

    def _bind(self, g: A.Function, e: A.Call) -> tuple[dict, dict] | None:
        """(pointer parameter -> what the kernel passes, integer parameter -> its value); None
        when no kernel pointer reaches the helper, or the helper only computes an address from
        one (``t.cells = &m.cells[r * m.pitch]``: no access, the pointer it sets is followed as
        such)."""
        alias: dict = {}
        env: dict = {}
        for i, (p, a) in enumerate(zip(g.params, e.args)):
            if isinstance(p.ty, A.PointerType):
                got = self._pointer(a)
                if got is not None:
                    if not self.callees(e.target or g.name, i):
                        return None
                    alias[p.name] = got
            elif isinstance(p.ty, A.ScalarType) and not p.ty.name.startswith(("float", "bfloat")):
                try:
                    env[p.name] = self._poly(a)
                except (_Opaque, af.BudgetExceeded):
                    continue
        return (alias, env) if alias else None

    def _separate(self, names: set[str], alias: dict, env: dict) -> bool:
        """Whether the helper's loop counters (atoms ``%name``) are none of the atoms the values
        passed to it, or the bounds in force, already use."""
        loops = {f"%{n}" for n in names}
        used = {str(a) for v in env.values() for a in v.atoms()}
        used |= {str(a) for _, off, _ in alias.values() if off is not None for a in off.atoms()}
        used |= {str(k) for k in self.hi}
        return not (loops & used)


def _declared(g: A.Function) -> set[str]:
    """Names the body of ``g`` declares (locals, loop counters)."""
    return {n.name for n in walk(g.body) if isinstance(n, A.VarDecl)}
