"""cuda2nki.fidelity: judging an NKI port against its CUDA kernel (``cuda2nki check`` / ``review``)."""

from __future__ import annotations

from typing import Any


def check(cuda_path: Any, port_path: Any, **options: Any) -> Any:
    from cuda2nki.fidelity.check import check as _check

    return _check(cuda_path, port_path, **options)


__all__ = ["check"]
