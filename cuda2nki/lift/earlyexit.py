"""``if (data) { ...; return; }`` at the top level of a kernel: the statements before the
``return`` run where the condition holds (a data-level guard, as a data-dependent branch), and
the rest of the kernel where it does not (:meth:`cuda2nki.lift.symexec.Executor._data_return`).
Variables the branch assigns are dead after it (its threads have returned), so the bindings of
before the branch stay for the rest."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift import shortcirc
from cuda2nki.lift import values as V

if TYPE_CHECKING:
    from cuda2nki.lift.symexec import Executor


def run_before_exit(ex: Executor, body: A.Stmt, c: V.DExpr) -> None:
    """Executes ``body`` (the branch without its final ``return``) under the data guard ``c``."""
    before = dict(ex.env)
    facts = shortcirc.implied_index(c)  # the index part of ``c``: a guard of the branch
    ex.dguards.append(c)
    ex.guards.append(facts if facts is not None else af.TRUE)
    ex.exec_block(body)
    ex.guards.pop()
    ex.dguards.pop()
    ex.env.clear()
    ex.env.update(before)
