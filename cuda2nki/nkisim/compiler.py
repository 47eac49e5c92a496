"""``nki.compiler`` / ``neuronxcc.nki.compiler``: kernel decorators and allocation control.

These only steer the compiler (which passes run, where tensors are placed), so the simulator
accepts them and computes the same values:

* the kernel decorators ``skip_middle_end_transformations``, ``enable_stack_allocator`` and
  ``force_auto_alloc`` return the kernel unchanged, bare or called with their options;
* ``sbuf.alloc`` / ``sbuf.mod_alloc`` / ``sbuf.auto_alloc`` (and the ``psum`` ones) return a
  :class:`DirectAllocation` that ``buffer=`` accepts as the memory it names.  Addresses are not
  modelled: the tensor is placed like any other tensor of that memory (its bytes are counted by
  the capacity checks while it is alive).  PSUM banks are: the blocks of a tensor
  (``nl.ndarray((n0, n1, nl.par_dim(128), 512), buffer=ncc.psum.mod_alloc(num_bank_tiles=(2,)))``)
  occupy the banks the allocation maps them to, which may be fewer than the blocks (blocks
  that share a bank reuse it, one after the other).
"""

from __future__ import annotations

import itertools
import math
import types
from collections.abc import Callable
from dataclasses import dataclass

from cuda2nki.nkisim.errors import invalid
from cuda2nki.nkisim.state import PSUM_BANKS
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


def _modulo(base: int, tiles: tuple[int, ...], idx: tuple[int, ...]) -> int:
    """Modulo placement of block ``idx``: ``base`` plus its index modulo ``tiles``, linearised
    row-major (no ``tiles``: every block at ``base``)."""
    shape = tiles or (1,) * len(idx)
    pos = 0
    for i, n in zip(idx, shape):
        pos = pos * n + i % n
    for n in shape[len(idx) :]:
        pos *= n
    return base + pos


@dataclass(frozen=True)
class DirectAllocation:
    """What ``ncc.sbuf.mod_alloc(...)`` and friends return: a placement in ``region``.

    ``bank_of``: for a PSUM allocation that fixes banks, the bank of each block index."""

    region: MemoryRegion
    how: str
    options: tuple = ()
    bank_of: Callable | None = None

    def psum_banks(self, blocks: tuple[int, ...], partitions: int, block_bytes: int) -> int | None:
        """How many distinct PSUM banks the blocks (block grid ``blocks``) land in; ``None``
        where the allocation does not fix them."""
        if self.bank_of is None:
            return None
        api = f"ncc.psum.{self.how}"
        banks = set()
        for idx in itertools.product(*(range(n) for n in blocks)):
            bank = self.bank_of(idx, partitions, block_bytes)
            if isinstance(bank, bool) or not isinstance(bank, int) or not 0 <= bank < PSUM_BANKS:
                raise invalid(
                    api, f"block {idx} placed in bank {bank!r}, outside 0..{PSUM_BANKS - 1}"
                )
            banks.add(bank)
        return len(banks) if banks else (0 if math.prod(blocks) == 0 else None)

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

    allocators = {"alloc": alloc, "mod_alloc": mod_alloc, "auto_alloc": auto_alloc}
    if region is psum:
        allocators.update(_psum_allocators())
    return allocators


def _psum_allocators() -> dict[str, Callable]:
    """PSUM's ``alloc`` / ``mod_alloc``: their placements name banks (first of the address)."""

    def alloc(func):
        """Place each block at ``func(idx=, pdim_size=, fdim_size=)`` (the block's index tuple,
        its partitions, its bytes per partition) = ``(bank, partition, address)``; the banks
        are counted, the rest is not modelled."""
        if not callable(func):
            raise TypeError("ncc.psum.alloc expects a function of the block indices")

        def bank_of(idx, partitions, nbytes):
            where = func(idx=idx, pdim_size=partitions, fdim_size=nbytes)
            return where[0] if isinstance(where, (tuple, list)) else where

        return DirectAllocation(psum, "alloc", bank_of=bank_of)

    def mod_alloc(
        base_bank=0,
        *,
        num_bank_tiles=(),
        base_partition=0,
        num_par_tiles=(),
        num_free_tiles=(),
        **kw,
    ):
        """Modulo allocation: block ``idx`` in bank ``base_bank + (idx mod num_bank_tiles)``."""
        del kw  # placement within a bank is not modelled
        tiles = tuple(int(n) for n in num_bank_tiles)
        opts = (base_bank, tiles, base_partition, tuple(num_par_tiles), tuple(num_free_tiles))

        def bank_of(idx, partitions, nbytes):
            return _modulo(int(base_bank), tiles, idx)

        return DirectAllocation(psum, "mod_alloc", opts, bank_of)

    return {"alloc": alloc, "mod_alloc": mod_alloc}


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
