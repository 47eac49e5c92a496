"""Which launch argument each kernel parameter receives.

A struct passed by value is one argument at the launch (``k<<<g, b>>>(d_A, s)``) and one
parameter per member in the kernel (``A__width, A__height, A__elements, s``; see
:mod:`cuda2nki.frontend.aggregates`), so the launch's host values (:class:`HostFacts` ``args``
and ``allocs``, one per argument) do not line up with the parameters by position.  A
:class:`Slot` per parameter says where its host value and allocation come from: the argument
itself, or one member of a struct argument (``members``, read by
:mod:`cuda2nki.frontend.hoststructs`).  Where the two cannot be lined up, no parameter gets a
host value (a value taken from another argument would be wrong, not just unknown).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from cuda2nki.frontend import ast as A


@dataclass(frozen=True)
class Slot:
    """Parameter ``param`` receives argument ``arg`` (``member``: one member of it)."""

    param: str
    arg: int
    member: Any = None  # cuda2nki.frontend.hoststructs.MemberFacts
    #: one member array of an array of structs (see :mod:`cuda2nki.frontend.recordsplit`): the
    #: argument's allocation counts whole records, not this member's elements
    part: bool = False

    def value(self, facts: Any) -> Any:
        """The host value (a HostExpr) the parameter receives, None if unknown."""
        if self.member is not None:
            return self.member.value
        return facts.args[self.arg] if self.arg < len(facts.args) else None

    def alloc(self, facts: Any) -> Any:
        """The bytes the host allocates for the pointer the parameter receives, None if
        unknown."""
        if self.member is not None:
            return self.member.alloc
        if self.part:
            return None
        return facts.allocs[self.arg] if self.arg < len(facts.allocs) else None


def slots(fn: A.Function, site: A.LaunchSite | None) -> list[Slot]:
    """One :class:`Slot` per parameter of ``fn`` that a launch argument gives (in parameter
    order); none when the arguments cannot be lined up with the parameters.  The member
    arrays of one array of structs (:attr:`A.Param.record`) all receive its argument."""
    if site is None or site.host is None:
        return []
    if not any(p.record for p in fn.params):
        return _slots([p.name for p in fn.params], site)
    groups: list[tuple[str, list[str]]] = []  # (record, its parameters)
    for p in fn.params:
        if p.record and groups and groups[-1][0] == p.record:
            groups[-1][1].append(p.name)
        else:
            groups.append((p.record, [p.name]))
    out: list[Slot] = []
    for slot, (record, names) in zip(_slots([g[1][0] for g in groups], site), groups):
        out.extend(dataclasses.replace(slot, param=n, part=bool(record)) for n in names)
    return out


def _slots(names: list[str], site: A.LaunchSite) -> list[Slot]:
    members = tuple(getattr(site.host, "members", ()) or ())
    if not any(members):
        if len(site.args) != len(names) and any("__" in n for n in names):
            return []  # a struct flattened into parameters the front end could not read
        return [Slot(n, i) for i, n in enumerate(names[: len(site.args)])]
    out: list[Slot] = []
    for i, got in enumerate(members):
        if got is None:
            out.append(Slot(names[len(out)] if len(out) < len(names) else "", i))
            continue
        first = names[len(out)] if len(out) < len(names) else ""
        if got and got[0].behind and not first.endswith("__" + "__".join(got[0].path)):
            out.append(Slot(first, i))  # a pointer to a struct the kernel keeps whole
            continue
        for m in got:
            name = names[len(out)] if len(out) < len(names) else ""
            if not name.endswith("__" + "__".join(m.path)):
                return []
            out.append(Slot(name, i, m))
    return out if len(out) == len(names) else []


def arg_names(fn: A.Function, site: A.LaunchSite) -> tuple[str | None, ...]:
    """Per launch argument, the kernel parameter that receives it whole (None: a struct, whose
    members are parameters of their own, or an argument no parameter lines up with)."""
    got = {s.arg: s.param for s in slots(fn, site) if s.member is None and not s.part}
    return tuple(got.get(i) for i in range(len(site.args)))


def resolve(text: str | None, names: tuple[str | None, ...]) -> str | None:
    """``text`` with its ``@i`` placeholders (launch argument positions) replaced by the
    parameters in ``names``; None when one names an argument no parameter receives whole."""
    if text is None:
        return None
    used = [int(m) for m in re.findall(r"@(\d+)", text)]
    if any(i >= len(names) or names[i] is None for i in used):
        return None
    return re.sub(r"@(\d+)", lambda m: str(names[int(m.group(1))]), text)
