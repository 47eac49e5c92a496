"""Tile IR: intent and scheduled-tile layers (see :mod:`cuda2nki.ir.nodes` for the model).

Public entry points: the node classes (re-exported here), :func:`cuda2nki.ir.printer.to_text`,
:func:`cuda2nki.ir.parser.parse`, :func:`cuda2nki.ir.verify.verify` and
:mod:`cuda2nki.ir.evaluate` (``evaluate``, ``error_bound``).
"""

from cuda2nki.ir.nodes import *  # noqa: F401,F403
from cuda2nki.ir.nodes import __all__ as _node_names
from cuda2nki.ir.ops import DTYPES, OP_INFO, is_float, is_int  # noqa: F401

__all__ = [*_node_names, "DTYPES", "OP_INFO", "is_float", "is_int"]
