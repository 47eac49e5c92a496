"""What the legacy NKI simulator does with Python it cannot see: rulings that follow it.

The public ``neuronxcc.nki`` kernels are traced Python: Python's own rules apply before the
simulator (or the compiler) sees anything.  Two such places, where the public test suites rely on
the legacy simulator's behaviour (see ``docs/simulator-rulings.md``):

* ``m1 and m2`` / ``m1 or m2`` on two masks: Python asks ``bool(m1)``; an index predicate is an
  object, true, so ``and`` yields ``m2`` and ``or`` yields ``m1``.  The simulator does the same
  and warns (C2N3021, a warning) that only one of the masks applies.
* A legacy kernel run by the public simulator (``nki.simulate_kernel``, ``@nki.jit`` called on
  NumPy arrays) that returns an SBUF tile: the legacy simulator hands back the tile's values.  So
  does this one, with a warning (C2N3011, a warning); the port checker
  (:func:`cuda2nki.nkisim.kernel.simulate_kernel`) keeps it an error.
* A legacy ``nisa.tensor_scalar`` whose operand is a tile of the data's shape (the samples'
  backward attention of 2024 passed one): the legacy public simulator applied it elementwise.
  So does this one, with a warning (C2N3014, a warning); the documented operand is a scalar or a
  ``(P, 1)`` tile, and the port checker keeps anything else an error.
"""

from __future__ import annotations

from cuda2nki.diagnostics import Severity, SourceLoc, make
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.errors import port_loc


def _note(code: str, loc: SourceLoc, notes: tuple[str, ...] = (), **fmt: object) -> None:
    """Record warning ``code`` at ``loc`` in the running simulation."""
    st.current().warnings.append(make(code, loc, severity=Severity.WARNING, notes=notes, **fmt))


def truthy_mask() -> bool:
    """``bool()`` of a legacy mask: true, as for any object, with a warning that ``and`` keeps
    only its right-hand mask and ``or`` its left-hand one."""
    _note(
        "C2N3021",
        port_loc(),
        api="mask",
        detail=(
            "'and' / 'or' (or 'if') on a mask tests the mask object, which is always true: "
            "'a and b' is b, 'a or b' is a; combine masks with '&' / '|'"
        ),
    )
    return True


def onchip_return(loc: SourceLoc, what: str, buffer: str) -> None:
    """Note that a kernel run by the legacy public simulator returns an on-chip tile (allocated
    at ``loc``)."""
    _note(
        "C2N3011",
        loc,
        notes=(
            "the legacy simulator returns the tile's values, as here; a compiled kernel cannot "
            "return an on-chip tile",
        ),
        what=what,
        buffer=buffer,
    )


def full_tile_operand(api: str, what: str, got: str) -> None:
    """Note that a legacy kernel run by the public simulator passes a full tile where
    ``tensor_scalar`` documents a scalar or a ``(P, 1)`` tile."""
    _note(
        "C2N3014",
        port_loc(),
        notes=(
            "the legacy simulator applies the tile elementwise, as here; the documented operand "
            "is a scalar or a (P, 1) tile (nisa.tensor_tensor takes a full tile)",
        ),
        api=api,
        detail=f"{what} must be a scalar or a (P, 1) tensor, got {got}",
    )
