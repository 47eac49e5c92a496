"""Tile IR: intent and scheduled-tile layers (see :mod:`cuda2nki.ir.nodes` for the model).

Entry points (also importable from here):

* nodes -- every class of :mod:`cuda2nki.ir.nodes`, the enums of :mod:`cuda2nki.ir.ops`;
* ``to_text(node, locs=True)`` -- the textual form (:mod:`cuda2nki.ir.printer`);
* ``parse(text, filename)`` / ``parse_all`` -- back to nodes (:mod:`cuda2nki.ir.parser`);
* ``analyse``, ``error_bound``, ``dtype_of``, ``TypeEnv``.

``cuda2nki.ir.verify``, ``cuda2nki.ir.evaluate`` and ``cuda2nki.ir.evaluate_tiles`` are *modules* (``from cuda2nki.ir import
evaluate; evaluate.evaluate(...)``, ``from cuda2nki.ir.verify import verify``):

* ``verify.verify(kernel) -> list[Diagnostic]``;
* ``evaluate.evaluate(kernel, inputs, scalars, mode="fp64"|"declared")``, ``evaluate.analyse``,
  ``evaluate.error_bound``; ``evaluate_tiles.evaluate_tiles`` for the scheduled layer;
* ``types.dtype_of`` / ``types.TypeEnv``.
"""

from importlib import import_module
from typing import Any

from cuda2nki.ir.nodes import *  # noqa: F401,F403
from cuda2nki.ir.nodes import __all__ as _node_names
from cuda2nki.ir.ops import DTYPES, OP_INFO, is_float, is_int  # noqa: F401

_LAZY = {
    "to_text": "cuda2nki.ir.printer",
    "parse": "cuda2nki.ir.parser",
    "parse_all": "cuda2nki.ir.parser",
    "analyse": "cuda2nki.ir.evaluate",
    "error_bound": "cuda2nki.ir.evaluate",
    "dtype_of": "cuda2nki.ir.types",
    "TypeEnv": "cuda2nki.ir.types",
}

__all__ = [*_node_names, "DTYPES", "OP_INFO", "is_float", "is_int", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'cuda2nki.ir' has no attribute {name!r}")
