"""``nki.compiler`` / ``neuronxcc.nki.compiler``: kernel decorators and allocation control.

These only steer the compiler (which passes run, where tensors are placed), so the simulator
accepts them and computes the same values:

* the kernel decorators ``skip_middle_end_transformations``, ``enable_stack_allocator`` and
  ``force_auto_alloc`` return the kernel unchanged, bare or called with their options;
* ``sbuf.alloc`` / ``sbuf.mod_alloc`` / ``sbuf.auto_alloc`` (and the ``psum`` ones) return a
  :class:`DirectAllocation` that ``buffer=`` accepts as the memory it names.  Addresses are not
  modelled: the tensor is placed like any other tensor of that memory (its bytes are counted by
  the capacity checks while it is alive).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass

from cuda2nki.nkisim.tensor import MemoryRegion, psum, sbuf


def _decorator(func):
    """A kernel decorator usable bare (``@d``) or with options (``@d(log_level=...)``)."""
    if func is None:
        return lambda f: f
    return func


def skip_middle_end_transformations(func=None):
    """Skip the compiler's middle-end passes: no effect on the values a kernel computes."""
    return _decorator(func)


def enable_stack_allocator(func=None, log_level=50):
    """Allocate SBUF/PSUM tensors with the stack allocator: no effect on values."""
    del log_level  # how much the allocator logs
    return _decorator(func)


def force_auto_alloc(func=None):
    """Force automatic allocation: no effect on values."""
    return _decorator(func)


@dataclass(frozen=True)
class DirectAllocation:
    """What ``ncc.sbuf.mod_alloc(...)`` and friends return: a placement in ``region``."""

    region: MemoryRegion
    how: str
    options: tuple = ()

    def __repr__(self) -> str:
        return f"ncc.{self.region.name}.{self.how}(...)"


def _allocators(region: MemoryRegion) -> dict[str, Callable]:
    def alloc(func):
        """Place each block of the tensor at the address ``func`` gives (not modelled)."""
        if not callable(func):
            raise TypeError(f"ncc.{region.name}.alloc expects a function of the block indices")
        return DirectAllocation(region, "alloc")

    def mod_alloc(base_addr=0, *, base_partition=0, num_par_tiles=(), num_free_tiles=(), **kw):
        """Modulo allocation of the tensor's tiles from ``base_addr`` (not modelled)."""
        opts = (base_addr, base_partition, tuple(num_par_tiles), tuple(num_free_tiles))
        return DirectAllocation(region, "mod_alloc", opts)

    def auto_alloc():
        """Let the compiler place the tensor: the same as passing the memory itself."""
        return DirectAllocation(region, "auto_alloc")

    return {"alloc": alloc, "mod_alloc": mod_alloc, "auto_alloc": auto_alloc}


def namespace(module: Callable[[str, dict], types.ModuleType], prefix: str) -> dict:
    """Modules of ``{prefix}.compiler`` (built by ``module(name, attrs)``), keyed by name."""
    sb = module(f"{prefix}.compiler.sbuf", _allocators(sbuf))
    ps = module(f"{prefix}.compiler.psum", _allocators(psum))
    top = module(
        f"{prefix}.compiler",
        {
            "skip_middle_end_transformations": skip_middle_end_transformations,
            "enable_stack_allocator": enable_stack_allocator,
            "force_auto_alloc": force_auto_alloc,
            "sbuf": sb,
            "psum": ps,
        },
    )
    return {top.__name__: top, sb.__name__: sb, ps.__name__: ps}
