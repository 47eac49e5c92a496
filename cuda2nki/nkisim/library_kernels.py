"""``neuronxcc.nki.kernels``: the kernel library the legacy compiler ships, refused name by name.

The legacy package documents a namespace of ready-made kernels (attention, vision) whose sources
are the NKI samples repository's ``reference`` kernels.  The simulator does not ship that
library, but code written against it imports the names at the top of a file (a test module that
also holds kernels of its own).  Refusing the import would hide everything else in the file, so
the modules import and each documented name is a placeholder that passes through
``baremetal``/``jit`` and stops with C2N3001, naming itself, where it is used: called, launched on
a grid (``k[grid]``) or given to the simulator.  Run the kernel's own source instead (the samples
repository's ``reference`` package) to check it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from cuda2nki.nkisim.errors import unsupported

PREFIX = "neuronxcc.nki.kernels"

#: The reason each refusal gives.
REASON = (
    "the compiler's kernel library is not shipped with the simulator; "
    "run the kernel's source from the NKI samples repository's reference package"
)

#: Documented names of the library, by submodule (``FlashConfig`` is the flash kernels'
#: configuration class).
DOCUMENTED: dict[str, tuple[str, ...]] = {
    "attention": (
        "FlashConfig",
        "flash_attn_bwd",
        "flash_fwd",
        "fused_self_attn_for_SD_small_head_size",
    ),
    "vision": ("resize_nearest_fixed_dma_kernel", "select_and_scatter_kernel"),
}

#: Documented names listed only at the package level.
PACKAGE_ONLY = (
    "allocated_fused_rms_norm_qkv",
    "allocated_fused_self_attn_for_SD_small_head_size",
)


@dataclass(frozen=True)
class RefusedKernel:
    """A documented library kernel the simulator does not provide; any use refuses it."""

    api: str

    #: ``baremetal``/``jit``/``benchmark`` hand it back unchanged (the refusal comes at use).
    sim_refused = True

    def refuse(self) -> NoReturn:
        raise unsupported(self.api, REASON)

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self.refuse()

    def __getitem__(self, grid: Any) -> NoReturn:
        self.refuse()


def is_refused(obj: object) -> bool:
    """Whether ``obj`` is a refused library kernel or another refused documented name
    (decorators pass it through)."""
    return getattr(type(obj), "sim_refused", False) is True


def documented_apis() -> dict[str, str]:
    """``{full name: reason}`` of every documented library name (for the coverage document)."""
    out = {f"{PREFIX}.{mod}.{name}": REASON for mod, names in DOCUMENTED.items() for name in names}
    return out | {f"{PREFIX}.{name}": REASON for name in PACKAGE_ONLY}


def namespace(make_module) -> dict[str, Any]:
    """``{module name: module}`` for ``neuronxcc.nki.kernels`` and its submodules, built with
    ``make_module(name, attrs)``; the package itself also holds every documented name."""
    mods: dict[str, Any] = {}
    top: dict[str, Any] = {"_sim_refusal": REASON}
    top |= {n: RefusedKernel(f"{PREFIX}.{n}") for n in PACKAGE_ONLY}
    for sub, names in DOCUMENTED.items():
        attrs = {n: RefusedKernel(f"{PREFIX}.{sub}.{n}") for n in names}
        top.update({n: k for n, k in attrs.items() if n not in top})
        mods[f"{PREFIX}.{sub}"] = make_module(f"{PREFIX}.{sub}", attrs | {"_sim_refusal": REASON})
    package = make_module(PREFIX, top)
    for sub in DOCUMENTED:
        package.__dict__[sub] = mods[f"{PREFIX}.{sub}"]
    mods[PREFIX] = package
    return mods
