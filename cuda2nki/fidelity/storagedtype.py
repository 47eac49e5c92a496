"""Output dtypes that are the CUDA buffer's dtype as NKI stores it.

NKI has no boolean tensor storage of its own: ``bool_`` is stored as ``uint8`` holding 0/1
(NKI.md, dtype table), so a port's ``uint8`` output stands for a CUDA ``bool`` buffer and is no
dtype mismatch (C2N4021).  Its values are still compared with the CUDA kernel's: anything but 0
where the kernel wrote ``false`` and 1 where it wrote ``true`` is a numeric mismatch.
"""

from __future__ import annotations

import numpy as np

#: CUDA buffer dtype -> the dtypes NKI stores it as
STORED_AS = {np.dtype(np.bool_): frozenset({np.dtype(np.uint8)})}


def stored_as(want: np.dtype, have: np.dtype) -> bool:
    """Whether an output of dtype ``have`` is how NKI stores a buffer of dtype ``want``."""
    return np.dtype(have) in STORED_AS.get(np.dtype(want), frozenset())
