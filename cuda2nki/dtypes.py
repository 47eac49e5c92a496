"""The dtype names every package speaks (NumPy-style strings) and their NumPy dtypes.

One table for the binding, the SIMT interpreter and the IR: ``bfloat16`` and the fp8 formats come
from ``ml_dtypes``; ``tfloat32`` is stored as float32 (its rounding is modelled by unit roundoff).

``ml_dtypes`` takes most of a second to import, so the tables resolve its types on first use:
a command that never meets bf16 or fp8 never imports it."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping

import numpy as np


def _ml_dtype(attr: str) -> np.dtype:
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, attr))


class DtypeTable(Mapping[str, np.dtype]):
    """An ordered, read-only ``name -> np.dtype`` table whose ``ml_dtypes`` entries (given as the
    attribute name, a ``str``) are imported on first access."""

    def __init__(self, entries: Mapping[str, np.dtype | str]) -> None:
        self._entries: dict[str, np.dtype | str] = dict(entries)

    def __getitem__(self, name: str) -> np.dtype:
        value = self._entries[name]
        if isinstance(value, str):
            value = self._entries[name] = _ml_dtype(value)
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __or__(self, other: DtypeTable) -> DtypeTable:
        return DtypeTable({**self._entries, **other._entries})

    def builtin_items(self) -> Iterator[tuple[str, np.dtype]]:
        """The entries NumPy knows natively (never imports ``ml_dtypes``)."""
        for name, value in self._entries.items():
            if not isinstance(value, str):
                yield name, value

    def name_of(self, dt: np.dtype) -> str | None:
        """The first name whose dtype equals ``dt``.  An ``ml_dtypes`` type can only be met once
        ``ml_dtypes`` is imported, so until then its entries are skipped, not resolved."""
        loaded = "ml_dtypes" in sys.modules
        for name, value in self._entries.items():
            if isinstance(value, str):
                if not loaded:
                    continue
                value = self[name]
            if value == dt:
                return name
        return None


#: integer, bool and the IEEE / bfloat16 formats: what C scalar types map onto
STANDARD_DTYPES = DtypeTable(
    {
        "bool": np.dtype(np.bool_),
        "int8": np.dtype(np.int8),
        "uint8": np.dtype(np.uint8),
        "int16": np.dtype(np.int16),
        "uint16": np.dtype(np.uint16),
        "int32": np.dtype(np.int32),
        "uint32": np.dtype(np.uint32),
        "int64": np.dtype(np.int64),
        "uint64": np.dtype(np.uint64),
        "float16": np.dtype(np.float16),
        "bfloat16": "bfloat16",
        "float32": np.dtype(np.float32),
        "float64": np.dtype(np.float64),
    }
)

#: the 8-bit float formats (Trainium's matmul and storage types)
FP8_DTYPES = DtypeTable(
    {
        "float8_e4m3": "float8_e4m3",
        "float8_e4m3fn": "float8_e4m3fn",
        "float8_e5m2": "float8_e5m2",
    }
)

#: every dtype name the IR accepts; float32 precedes tfloat32 so reverse lookups say float32
NUMPY_DTYPES = STANDARD_DTYPES | FP8_DTYPES | DtypeTable({"tfloat32": np.dtype(np.float32)})
