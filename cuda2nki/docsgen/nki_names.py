"""The second table of ``docs/nki-api-coverage.md``: the public NKI names that are not
instructions -- entry points (``nki.jit``), dtypes, memory regions, enums, classes, constants --
read from the namespaces :func:`cuda2nki.nkisim.importer.build_modules` installs."""

from __future__ import annotations

import enum
import types

#: namespaces per generation, with the name the document gives each
MODULES = {
    "current": {
        "nki": "nki",
        "nki.language": "nl",
        "nki.isa": "nisa",
        "nki.typing": "nki.typing",
        "nki.dtype": "nki.dtype",
    },
    "legacy": {
        "neuronxcc.nki": "nki",
        "neuronxcc.nki.language": "nl",
        "neuronxcc.nki.isa": "nisa",
        "neuronxcc.nki.typing": "nki.typing",
    },
}

#: what a name of this table does in the simulator, where that is not the obvious
NOTES = {
    "nisa.NkiInstruction": "instructions return None in the simulator; depends_on orders nothing "
    "(instructions run in program order)",
    "nisa.NkiValidationError": "the type a violated hardware constraint is raised as (it also "
    "carries the diagnostic)",
    "nisa.VirtualRegister": "one 32-bit integer; Python arithmetic on it is refused (C2N3021)",
    "nki.typing.tensor": "annotations only",
    "nki.typing.scalar": "annotations only",
    "nki.typing.mutable_tensor": "annotations only",
}


def _kind(value: object) -> str | None:
    from cuda2nki.nkisim.dtypes import NkiDType
    from cuda2nki.nkisim.tensor import MemoryRegion

    if isinstance(value, types.ModuleType) or getattr(type(value), "sim_refused", False):
        return None  # a namespace (listed by its names), or a refused name (first table)
    if isinstance(value, NkiDType):
        return "dtype"
    if isinstance(value, MemoryRegion):
        return "memory region"
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return "enum"
    if isinstance(value, enum.Enum):
        return "enum member"
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "entry point"
    return "constant"


def rows(functions: set[str]) -> list[dict[str, str]]:
    """One row per public name that is not in ``functions`` (the instruction table's names)."""
    from cuda2nki.nkisim.importer import build_modules

    mods = build_modules()
    names: dict[str, dict[str, str]] = {}
    for gen, modnames in MODULES.items():
        for modname, short in modnames.items():
            for k, v in vars(mods[modname]).items():
                api = f"{short}.{k}"
                if k.startswith("_") or api in functions:
                    continue
                if short != "nki" and callable(v) and not isinstance(v, type):
                    if getattr(v, "__module__", "").startswith("cuda2nki.nkisim"):
                        continue  # an instruction or function: the first table
                kind = _kind(v)
                if kind is not None:
                    names.setdefault(api, {"kind": kind})[gen] = "implemented"
    return [
        {
            "api": api,
            "current": d.get("current", "absent"),
            "legacy": d.get("legacy", "absent"),
            "kind": d["kind"],
            "notes": NOTES.get(api, ""),
        }
        for api, d in sorted(names.items())
    ]
