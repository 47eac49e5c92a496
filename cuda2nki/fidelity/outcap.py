"""How many bytes a sandboxed port may hand back for one test point.

The cap is the file-size limit (``RLIMIT_FSIZE``) of the sandboxed interpreter and the most the
checker reads back from one point's ``.npz``.  It follows what the point can legitimately need:
the outputs the binding gives it (every run of the point, each output element with room for a
64-bit value sent as a pair of limbs and its writer map), never less than :data:`FLOOR` nor than
:data:`PER_INPUT_BYTE` times the inputs, and never more than :data:`CEILING`, so that a hostile
port cannot fill the disk.  A port whose results exceed the cap is stopped before they are
written and reported (C2N4014) with the sizes involved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuda2nki.binding import Resolved

#: the cap below which nothing is ever cut (small kernels, and callers that give no outputs)
FLOOR = 64 << 20
#: the documented maximum: no port writes a file larger than this (2 GiB)
CEILING = 2 << 30
#: bytes allowed per input byte (outputs the binding does not describe: kept from before)
PER_INPUT_BYTE = 8
#: bytes allowed per expected output element: a value of up to 8 bytes, or a pair of 8-byte
#: limbs, plus its 8-byte writer map, with room to spare
PER_OUTPUT_ELEMENT = 32
#: bytes the ``.npz`` container adds per array (zip headers, the ``.npy`` header)
PER_ARRAY_OVERHEAD = 4096


def output_cap(in_bytes: int, out_elements: Sequence[int] = ()) -> int:
    """The cap for a job whose inputs take ``in_bytes`` and whose test points expect
    ``out_elements`` output elements each (all runs of the point together)."""
    need = max(out_elements, default=0) * PER_OUTPUT_ELEMENT + (1 << 20)
    return min(CEILING, max(FLOOR, PER_INPUT_BYTE * in_bytes, need))


def expected_elements(r: Resolved) -> int:
    """Elements of the tensors the kernel writes at ``r``: what one run of the port returns."""
    return sum(math.prod(r.shapes[t.name]) for t in r.binding.tensors if t.role != "in")


def returned_bytes(arrays: dict) -> int:
    """What the ``.npz`` of ``arrays`` takes, near enough (its data plus headers)."""
    return sum(int(getattr(a, "nbytes", 0)) + PER_ARRAY_OVERHEAD for a in arrays.values())


def too_large(returned: int, cap: int) -> str:
    """The reason given for a point whose results exceed the cap."""
    return (
        f"the port returned {returned:,} bytes of results, more than its outputs could need "
        f"(at most {cap:,} bytes for this shape, never more than {CEILING:,}); the sandbox "
        "stopped it"
    )
