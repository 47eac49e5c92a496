"""cuda2nki: migrate CUDA kernels to AWS Trainium NKI and check the fidelity of ports, on the CPU.

The public API (what the command line calls) is re-exported lazily from :mod:`cuda2nki.api` so
that importing the package stays cheap and never patches anything globally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names load on first use
    from cuda2nki.api import check, parse, port, review, run, simulate  # noqa: F401

__version__ = "0.1.0"

_API = ("port", "check", "review", "simulate", "run", "parse")


def __getattr__(name: str) -> Any:
    if name in _API:
        from cuda2nki import api

        return getattr(api, name)
    raise AttributeError(name)


__all__ = ["__version__", *_API]
