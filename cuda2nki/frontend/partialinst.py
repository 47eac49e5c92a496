"""Kernel templates launched only from host templates: the integers the launches fix.

``multi_warp_cg_reduce<T, 512, 512 / groups><<<g, b, smem>>>(...)`` inside a host function
template ``reduce<T>`` fixes the kernel's integer parameters (block and tile sizes, which the
kernel needs as constants) but not ``T``, a parameter of the host template.  Such a launch
instantiates nothing by itself; the kernel is then lowered once per distinct set of integers
the launches fix, its type parameters kept as parameters (as for a kernel never launched,
C2N1023).  A launch whose integers do not fold contributes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer
    from cuda2nki.frontend.unit import FuncDef

Request = tuple[str, list, A.SourceLoc, tuple]


def partial_envs(
    low: BodyLowerer, fd: FuncDef, requests: Sequence[Request]
) -> list[dict[str, int | None]]:
    """One environment per distinct set of integer template arguments the launches of
    ``fd`` fix (every other parameter None), in launch order; none when no launch fixes
    one."""
    out: list[dict[str, int | None]] = []
    for kname, targs, _loc, _args in requests:
        if kname != fd.name or len(targs) > len(fd.template_params):
            continue
        env: dict[str, int | None] = {p[0]: None for p in fd.template_params}
        for (pname, kind, _default, _n), ta in zip(fd.template_params, targs):
            if kind != "int" or not isinstance(ta, A.Expr):
                continue
            v = low.const_value(ta)
            if isinstance(v, int) and not isinstance(v, bool):
                env[pname] = v
        if any(v is not None for v in env.values()) and env not in out:
            out.append(env)
    return out


def partial_name(name: str, fd: FuncDef, env: dict[str, int | None]) -> str:
    """``k<T, 512, 256>``: the integers fixed, the others by their parameter's name."""
    vals = [str(env[p[0]]) if env.get(p[0]) is not None else p[0] for p in fd.template_params]
    return f"{name}<{', '.join(vals)}>"
