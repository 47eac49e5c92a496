"""Virtual registers of the engine sequencers (``nisa.register_*``) and the loops they drive.

A :class:`VirtualRegister` holds one 32-bit integer.  ``nisa.register_alloc`` makes one
(optionally with a value), ``register_move`` sets it from a constant or another register,
``register_load`` reads the single element of a tensor into it and ``register_store`` writes it
back.  Registers give the runtime bounds of ``nl.dynamic_range`` and ``nl.fori_loop``, the
condition of ``nl.while_loop`` and of a bare ``while reg:``, and a ``scalar_offset`` of an access
pattern.  The simulator knows the value, so these run as the loops they describe.  A register's
value is known only on the device: the arithmetic of Python on it is refused (C2N3021), as is
reading a register that was never given a value.
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from cuda2nki.nkisim.errors import invalid, unsupported
from cuda2nki.nkisim.tensor import NkiTensor

_INT32 = (-(2**31), 2**31 - 1)


class VirtualRegister:
    """A virtual register on an engine sequencer: one 32-bit integer, or unset."""

    __slots__ = ("_value",)

    def __init__(self, value: int | None = None):
        self._value = value

    @property
    def value(self) -> int:
        if self._value is None:
            raise invalid("VirtualRegister", "read before a value was moved or loaded into it")
        return self._value

    def set(self, value: int, api: str) -> None:
        v = int(value)
        if not _INT32[0] <= v <= _INT32[1]:
            raise invalid(api, f"value {v} does not fit a 32-bit register")
        self._value = v

    # the uses a register has: loop bounds, conditions, offsets
    def __index__(self) -> int:
        return self.value

    __int__ = __index__

    def __bool__(self) -> bool:
        return self.value != 0

    def __repr__(self) -> str:
        return f"VirtualRegister({self._value})"

    def _arith(self, *_: object) -> NoReturn:
        raise invalid(
            "VirtualRegister",
            "a register's value exists only on the device: compute with tensors and "
            "register_load the result, or use the register as a loop bound or scalar_offset",
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _arith
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = __rmod__ = _arith
    __lt__ = __le__ = __gt__ = __ge__ = _arith

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        if other is None or isinstance(other, VirtualRegister):
            return self is other
        self._arith()

    def __ne__(self, other: object) -> bool:  # type: ignore[override]
        return not self.__eq__(other)

    __hash__ = object.__hash__


def _one_element(t, api: str, what: str) -> NkiTensor:
    if not isinstance(t, NkiTensor):
        raise invalid(api, f"{what} must be a tensor, got {type(t).__name__}")
    if int(np.prod(t.shape)) != 1:
        raise invalid(api, f"{what} must hold exactly one element, got shape {tuple(t.shape)}")
    if t.dtype.is_float or t.dtype.np_dtype.itemsize > 4:
        raise unsupported(f"{api} of a {t.dtype.name} tensor", "registers hold 32-bit integers")
    return t


def _register(r, api: str, what: str) -> VirtualRegister:
    if not isinstance(r, VirtualRegister):
        raise invalid(api, f"{what} must be a register from nisa.register_alloc")
    return r


def register_alloc(x=None) -> VirtualRegister:
    """A new register, unset (``None``), set to an integer, or loaded from a one-element tensor."""
    api = "nisa.register_alloc"
    r = VirtualRegister()
    if isinstance(x, NkiTensor):
        register_load(r, x)
    elif isinstance(x, VirtualRegister):
        r.set(x.value, api)
    elif x is not None:
        if isinstance(x, float) or not isinstance(x, (int, np.integer)):
            raise invalid(api, f"x must be None or an integer, got {x!r}")
        r.set(x, api)
    return r


def register_move(dst, src) -> None:
    """``dst = src``: a compile-time integer or another register's value."""
    api = "nisa.register_move"
    reg = _register(dst, api, "dst")
    if isinstance(src, VirtualRegister):
        reg.set(src.value, api)
    elif isinstance(src, (int, np.integer)) and not isinstance(src, bool):
        reg.set(src, api)
    else:
        raise invalid(api, f"src must be an integer or a register, got {type(src).__name__}")


def register_load(dst, src) -> None:
    """Read the single element of ``src`` (HBM or SBUF) into register ``dst``."""
    api = "nisa.register_load"
    reg = _register(dst, api, "dst")
    t = _one_element(src, api, "src")
    reg.set(int(np.asarray(t.values(api)).reshape(-1)[0]), api)


def register_store(dst, src) -> None:
    """Write register ``src`` into the single element of ``dst`` (HBM or SBUF)."""
    api = "nisa.register_store"
    t = _one_element(dst, api, "dst")
    reg = _register(src, api, "src")
    t.assign(np.full(t.shape, reg.value, dtype=t.dtype.np_dtype), api=api)


def loop_bound(x, api: str, what: str) -> int:
    """An ``int`` bound of a dynamic loop: an integer or a register's value."""
    if isinstance(x, VirtualRegister):
        return x.value
    try:
        return int(x)
    except (TypeError, ValueError):
        raise invalid(api, f"{what} must be an integer or a register, got {x!r}") from None


def loop_step(step, api: str) -> int:
    """The step of a dynamic loop: a compile-time positive integer, never a register."""
    if isinstance(step, VirtualRegister) or not isinstance(step, (int, np.integer)) or step <= 0:
        raise invalid(api, f"step must be a compile-time positive integer, got {step!r}")
    return int(step)
