"""What the literal lowering carries between its parts: refusals, scopes and bindings."""

from __future__ import annotations

from dataclasses import dataclass

from cuda2nki.lift.literal.values import Value


class LiteralRefusal(Exception):
    """A construct the literal lowering cannot translate faithfully."""

    def __init__(self, construct: str, loc: object) -> None:
        super().__init__(construct)
        self.construct = construct
        self.loc = loc


class NotAffine(LiteralRefusal):
    """A local took a value of a wider class than the one it was classified in: a thread-affine
    local a value that is not (``r = r % (T * T)``: the division is not exact in the thread), an
    index or uniform local a value read from data (written through a reference of an inlined
    function, which the classification does not follow).  Lowering again with ``local`` held in
    class ``klass`` (``I``: an index local, ``T``: a per-thread tile) ports it (see
    :func:`lower_kernel_body`)."""

    def __init__(
        self,
        local: str,
        loc: object,
        klass: str = "I",
        construct: str = "a non-affine value assigned to an affine local",
    ) -> None:
        super().__init__(construct, loc)
        self.local = local
        self.klass = klass


@dataclass
class Scope:
    """What the lowering knows at one point of the per-block program."""

    mask: str | None = None  # the threads executing here (None: all live threads)
    depth: int = 0  # nesting of per-thread conditions (see classify)
    in_varying_loop: bool = False
    np_mask: str | None = None  # the index-only conditions among them, as a trace-time array


@dataclass
class Binding_:
    value: Value
    klass: str  # U L T P A
    depth: int
    ty: str = "float"
    cname: str = ""
