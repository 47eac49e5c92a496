"""Tile IR: intent and scheduled-tile layers (see :mod:`cuda2nki.ir.nodes` for the model).

Entry points (also importable from here):

* nodes -- every class of :mod:`cuda2nki.ir.nodes`, the enums of :mod:`cuda2nki.ir.ops`;
* ``to_text(node, locs=True)`` -- the textual form (:mod:`cuda2nki.ir.printer`);
* ``parse(text, filename)`` / ``parse_all`` -- back to nodes (:mod:`cuda2nki.ir.parser`);
* ``verify(kernel) -> list[Diagnostic]`` (:mod:`cuda2nki.ir.verify`);
* ``evaluate(kernel, inputs, scalars, mode="fp64"|"declared")``, ``analyse``, ``error_bound``
  (:mod:`cuda2nki.ir.evaluate`); ``evaluate_tiles`` for the scheduled layer
  (:mod:`cuda2nki.ir.evaluate_tiles`);
* ``dtype_of`` / ``TypeEnv`` (:mod:`cuda2nki.ir.types`).
"""

from importlib import import_module
from typing import Any

# bound eagerly: the submodules ``verify`` and ``evaluate`` share these functions' names
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.nodes import *  # noqa: F401,F403
from cuda2nki.ir.nodes import __all__ as _node_names
from cuda2nki.ir.ops import DTYPES, OP_INFO, is_float, is_int  # noqa: F401
from cuda2nki.ir.verify import verify

_LAZY = {
    "to_text": "cuda2nki.ir.printer",
    "parse": "cuda2nki.ir.parser",
    "parse_all": "cuda2nki.ir.parser",
    "analyse": "cuda2nki.ir.evaluate",
    "error_bound": "cuda2nki.ir.evaluate",
    "evaluate_tiles": "cuda2nki.ir.evaluate_tiles",
    "dtype_of": "cuda2nki.ir.types",
    "TypeEnv": "cuda2nki.ir.types",
}

__all__ = [*_node_names, "DTYPES", "OP_INFO", "is_float", "is_int", "evaluate", "verify", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'cuda2nki.ir' has no attribute {name!r}")
