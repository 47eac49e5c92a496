"""Documented names the simulator does not model: importable, refused where they are used.

``from nki.isa import sendrecv`` or ``from nki.collectives import ReplicaGroup`` sits at the top of
a module that may hold many kernels, most of which never reach the refused name.  Upstream such a
module imports; refusing the ``import`` statement would hide every other kernel of the file.  So a
``from``-import of a documented but unmodelled name binds a :class:`RefusedName` placeholder, and
the C2N3001 refusal (naming the API and the reason) comes where the placeholder is used: called,
subscripted or asked for an attribute.  An attribute read through the namespace (``nisa.sendrecv``)
is a use and is refused on the spot, and a name that is not documented at all is refused at the
import, as before.
"""

from __future__ import annotations

import dis
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

from cuda2nki.nkisim.errors import unsupported

_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


@dataclass(frozen=True)
class RefusedName:
    """A documented name the simulator does not model; any use raises C2N3001."""

    api: str
    reason: str

    #: ``jit``/``baremetal`` hand it back unchanged (the refusal comes at use).
    sim_refused = True

    def refuse(self) -> NoReturn:
        raise unsupported(self.api, self.reason)

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self.refuse()

    def __getitem__(self, item: Any) -> NoReturn:
        self.refuse()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self.refuse()

    def __repr__(self) -> str:
        return f"<{self.api}: not modelled by the simulator>"


def importing(depth: int = 2) -> bool:
    """Whether the attribute read being served comes from an import statement: the
    ``IMPORT_FROM`` of ``from m import name``, or importlib's ``fromlist`` handling.

    ``depth`` counts the frames between the caller and the reader (the module's
    ``__getattr__`` hook is one)."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return False
    if f.f_code.co_name == "_handle_fromlist" and f.f_code.co_filename.startswith("<frozen"):
        return True
    code = f.f_code.co_code
    return 0 <= f.f_lasti < len(code) and code[f.f_lasti] == _IMPORT_FROM
