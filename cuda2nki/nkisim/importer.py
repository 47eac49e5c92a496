"""Make ``import nki`` / ``import neuronxcc.nki`` resolve to the simulator, only inside a context.

Nothing is installed when :mod:`cuda2nki` is imported.  :func:`nki_namespace` temporarily puts the
simulator's modules into ``sys.modules`` (and a finder on ``sys.meta_path`` that turns imports of
unknown ``nki.*`` submodules into a "not supported by the simulator" diagnostic), then restores
whatever was there.  An installed real ``nki`` / ``neuronxcc`` is left alone unless
``shadow=True``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.util
import itertools
import os
import sys
import types

from cuda2nki.diagnostics import DiagnosticError, SourceLoc, make
from cuda2nki.nkisim import compiler as _compiler
from cuda2nki.nkisim import device_only as _device_only
from cuda2nki.nkisim import dtypes as _dt
from cuda2nki.nkisim import engine as _engine
from cuda2nki.nkisim import isa as _isa
from cuda2nki.nkisim import kernel as _kernel
from cuda2nki.nkisim import language as _nl
from cuda2nki.nkisim import legacy_isa as _lisa
from cuda2nki.nkisim import library_kernels as _library
from cuda2nki.nkisim import nonzero as _nonzero
from cuda2nki.nkisim import registers as _reg
from cuda2nki.nkisim.errors import NkiValidationError, unsupported
from cuda2nki.nkisim.refused_names import RefusedName, importing
from cuda2nki.nkisim.tensor import MemoryRegion, NkiTensor

#: Documented APIs the simulator does not model, with the reason its C2N3001 diagnostic gives
#: (keyed by the last part of the module name and the attribute).  Any other unknown name is
#: refused too, naming the API generation it belongs to when it exists in the other one.
NOT_SIMULATED = {
    "isa.nc_matmul_mx": "trn3 MX (microscaling) matmul is not modelled",
    "isa.quantize_mx": "trn3 MX quantisation is not modelled",
    "isa.sendrecv": "transfers between logical cores are not modelled",
    "isa.tensor_copy_dynamic_src": "removed in NKI 0.4.0; index the source with .ap(scalar_offset=...)",
    "isa.tensor_copy_dynamic_dst": "removed in NKI 0.4.0; index the destination with .ap(...)",
    "isa.topk": "its 16-partition snake layout and result order are not modelled",
}

#: ``nki.collectives``: communication between NeuronCores.  The simulator runs one NeuronCore,
#: so every name of the namespace is refused with this reason (those of the public API reference
#: are listed in ``NOT_SIMULATED`` for the coverage document).
COLLECTIVES_REASON = "collective communication between NeuronCores is not modelled"
#: The names of ``nki.collectives`` in the public API reference.
COLLECTIVES = (
    "ReplicaGroup",
    "all_gather",
    "all_gather_v",
    "all_reduce",
    "all_to_all",
    "all_to_all_v",
    "collective_permute",
    "collective_permute_implicit",
    "collective_permute_implicit_current_processing_rank_id",
    "collective_permute_implicit_reduce",
    "rank_id",
    "reduce_scatter",
)
for _name in COLLECTIVES:
    NOT_SIMULATED[f"collectives.{_name}"] = COLLECTIVES_REASON
del _name


class SimModule(types.ModuleType):
    """A namespace module of the simulator; unknown public names raise C2N3001.

    The refusal is the module's own ``__getattr__`` (PEP 562, in its ``__dict__``), not a method
    of this class: a class-level ``__getattr__`` would route every attribute read of ``nl`` /
    ``nisa`` (the ports' hottest lookups) through the slow generic hook."""

    _sim_legacy: bool = False
    _sim_other: types.ModuleType | None = None  # the same namespace in the other API generation


def _missing(m: SimModule, name: str):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    short = m.__name__.rsplit(".", 1)[-1]
    documented = NOT_SIMULATED.get(f"{short}.{name}")
    if documented is not None and importing(2):
        # imported, not used: the placeholder refuses where the port uses it
        return RefusedName(f"{m.__name__}.{name}", documented)
    detail = documented or m.__dict__.get("_sim_refusal", "")
    other = m.__dict__.get("_sim_other")
    if not detail and other is not None and name in other.__dict__:
        detail = (
            "not part of the legacy neuronxcc.nki API"
            if m._sim_legacy
            else "legacy neuronxcc.nki API only"
        )
    raise unsupported(f"{m.__name__}.{name}", detail)


def _module(name: str, legacy: bool, attrs: dict) -> SimModule:
    m = SimModule(name)
    m._sim_legacy = legacy
    m.__dict__.update(attrs)
    m.__dict__["__getattr__"] = functools.partial(_missing, m)
    m.__dict__["__package__"] = name
    m.__dict__["__path__"] = []  # a package, so submodule imports go through sys.modules
    return m


def _public(mod, exclude=()) -> dict:
    return {
        k: v
        for k, v in vars(mod).items()
        if not k.startswith("_") and k not in exclude and not isinstance(v, types.ModuleType)
    }


class NkiInstruction:
    """``nki.isa.NkiInstruction``: a traced instruction's handle.  The simulator runs the
    instructions in program order, so every ``depends_on`` edge already holds."""

    def depends_on(self, *producers: NkiInstruction) -> NkiInstruction:
        for p in producers:
            if not isinstance(p, NkiInstruction):
                raise unsupported(
                    "NkiInstruction.depends_on", f"a producer that is a {type(p).__name__}"
                )
        return self


class _TensorType:
    """``nt.tensor[128, 512]`` / ``nki.tensor`` annotations (no runtime meaning)."""

    def __class_getitem__(cls, item):
        return cls


def _typing_attrs() -> dict:
    return {"tensor": _TensorType, "scalar": _TensorType, "mutable_tensor": _TensorType}


_NL_EXCLUDE = {
    "no_extra_kw",
    "dma_extent",
    "dst_tag",
    "src_key",
    "annotations",
    "builtins",
    "math",
    "np",
    "Sequence",
    "dt",
    "ops",
    "st",
    "LEGACY_ONLY",
    "allocate",
    "mat",
    "on_chip",
    "record",
    "write_mat",
    "fail",
    "invalid",
    "unsupported",
    "IndexExpr",
    "Mask",
    "MemoryRegion",
}
_ISA_EXCLUDE = {
    "no_extra_kw",
    "dma_extent",
    "dst_tag",
    "src_key",
    "annotations",
    "math",
    "np",
    "dt",
    "ops",
    "st",
    "fail",
    "invalid",
    "unsupported",
    "FP32_CLASS",
    "ENUMS",
    "MATMUL_DTYPES",
    "HBM_KINDS",
    "NkiTensor",
    "hbm",
    "private_hbm",
    "psum",
    "sbuf",
    "shared_hbm",
    "mat",
    "on_chip",
    "record",
    "same_free",
    "same_partitions",
    "scalar_or_col",
    "tensor_arg",
    "write_mat",
    "no_psum",
    "check_pstart",
    "engine_name",
    "matmul_values",
    "matmul_operands",
    "mask_where",
    "Lazy",
}


#: helpers of :mod:`cuda2nki.nkisim.registers` that are no NKI names
_REG_EXCLUDE = {"annotations", "np", "invalid", "unsupported", "NkiTensor", "NoReturn"}
_REG_EXCLUDE |= {"loop_bound", "loop_step"}


#: ``nki.isa.constants``: the enums of the ISA's keyword arguments (also ``nisa.<enum>``).
_ISA_CONSTANTS = (
    "engine",
    "reduce_cmd",
    "dge_mode",
    "oob_mode",
    "matmul_perf_mode",
    "nc_version",
    "dma_engine",
)


def _extras(prefix: str, legacy: bool, isa: SimModule) -> dict[str, SimModule]:
    """``{prefix}.compiler`` (and its ``sbuf``/``psum``) and ``{prefix}.isa.constants``."""
    mods = _compiler.namespace(lambda name, attrs: _module(name, legacy, attrs), prefix)
    consts = _module(
        f"{prefix}.isa.constants", legacy, {k: getattr(_engine, k) for k in _ISA_CONSTANTS}
    )
    isa.__dict__["constants"] = consts
    mods[consts.__name__] = consts
    return mods


def _dtype_module() -> SimModule:
    """``nki.dtype``: the NKI dtypes (also used as the annotation of a dtype argument)."""
    attrs = dict(_dt.ALL) | {k: v for k, v in _dt.ALIASES.items() if k != "bool"}
    return _module("nki.dtype", False, attrs)


def build_modules() -> dict[str, SimModule]:
    """Fresh module objects for both namespaces."""
    nl_cur = {k: v for k, v in _public(_nl, _NL_EXCLUDE).items() if k not in _nl.LEGACY_ONLY}
    nl_cur |= {"DType": _dt.NkiDType, "MemoryRegion": MemoryRegion}
    nl_leg = _public(_nl, _NL_EXCLUDE)
    isa_cur = _public(_isa, _ISA_EXCLUDE) | _public(_reg, _REG_EXCLUDE)
    isa_cur["nonzero_with_count"] = _nonzero.nonzero_with_count
    isa_cur |= {"NkiValidationError": NkiValidationError, "NkiInstruction": NkiInstruction}
    isa_leg = _public(_lisa, _ISA_EXCLUDE | {"IndexExpr", "allocate"})
    mods: dict[str, SimModule] = {}
    # current API
    lang = _module("nki.language", False, nl_cur)
    isa = _module("nki.isa", False, isa_cur)
    typ = _module("nki.typing", False, _typing_attrs())
    extras = _extras("nki", False, isa)
    dtype = _dtype_module()
    coll = _module("nki.collectives", False, {"_sim_refusal": COLLECTIVES_REASON})
    top = _module(
        "nki",
        False,
        {
            "jit": _kernel.jit_factory(False),
            "simulate": _kernel.simulate,
            "language": lang,
            "isa": isa,
            "typing": typ,
            "tensor": NkiTensor,
            "compiler": extras["nki.compiler"],
            "dtype": dtype,
            "collectives": coll,
        },
    )
    mods.update({"nki": top, "nki.language": lang, "nki.isa": isa, "nki.typing": typ})
    mods.update(extras)
    mods["nki.dtype"] = dtype
    mods["nki.collectives"] = coll
    # legacy API
    llang = _module("neuronxcc.nki.language", True, nl_leg)
    lisa = _module("neuronxcc.nki.isa", True, isa_leg)
    ltyp = _module("neuronxcc.nki.typing", True, _typing_attrs())
    ljit = _kernel.jit_factory(True)
    lextras = _extras("neuronxcc.nki", True, lisa)
    ltop = _module(
        "neuronxcc.nki",
        True,
        {
            "jit": ljit,
            "trace": lambda fn=None, **kw: fn if fn is not None else (lambda f: f),
            "baremetal": _kernel.baremetal,
            "simulate_kernel": _kernel.legacy_simulate_kernel,
            "benchmark": _device_only.benchmark,
            "profile": _kernel.baremetal,
            "language": llang,
            "isa": lisa,
            "typing": ltyp,
            "tensor": NkiTensor,
            "compiler": lextras["neuronxcc.nki.compiler"],
        },
    )
    library = _library.namespace(lambda name, attrs: _module(name, True, attrs))
    ltop.__dict__["kernels"] = library[_library.PREFIX]
    root = _module("neuronxcc", True, {"nki": ltop})
    for cur, leg in ((lang, llang), (isa, lisa), (top, ltop)):
        cur._sim_other, leg._sim_other = leg, cur
    mods.update(
        {
            "neuronxcc": root,
            "neuronxcc.nki": ltop,
            "neuronxcc.nki.language": llang,
            "neuronxcc.nki.isa": lisa,
            "neuronxcc.nki.typing": ltyp,
        }
    )
    mods.update(lextras)
    mods.update(library)
    return mods


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, roots: set[str]):
        self.roots = roots

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.split(".")[0]
        if root in self.roots and fullname not in sys.modules:
            raise DiagnosticError(
                make("C2N3001", _import_loc(), api=f"import {fullname}", detail="")
            )
        return None


def _import_loc() -> SourceLoc:
    from cuda2nki.nkisim.errors import port_loc

    f = sys._getframe(1)
    while f is not None and (
        f.f_code.co_filename.startswith("<frozen")
        or "importlib" in f.f_code.co_filename
        or f.f_code.co_filename == __file__
    ):
        f = f.f_back
    return SourceLoc(f.f_code.co_filename, f.f_lineno, 1) if f is not None else port_loc()


def _real_exists(root: str, ours: dict) -> bool:
    saved = {
        k: sys.modules.pop(k) for k in list(sys.modules) if k == root or k.startswith(root + ".")
    }
    try:
        if any(v not in ours.values() for v in saved.values()):
            return True
        return importlib.util.find_spec(root) is not None
    except (ImportError, ValueError):
        return False
    finally:
        sys.modules.update(saved)


@contextlib.contextmanager
def nki_namespace(shadow: bool = False):
    """Inside the block, ``import nki``/``neuronxcc.nki`` give the simulator (see module doc)."""
    mods = build_modules()
    roots = set()
    for root in ("nki", "neuronxcc"):
        if shadow or not _real_exists(root, mods):
            roots.add(root)
    names = [n for n in mods if n.split(".")[0] in roots]
    saved = {n: sys.modules[n] for n in list(sys.modules) if n.split(".")[0] in roots}
    for n in saved:
        del sys.modules[n]
    for n in names:
        sys.modules[n] = mods[n]
    finder = _Finder(roots)
    sys.meta_path.insert(0, finder)
    try:
        yield mods
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)
        for n in list(sys.modules):
            if n.split(".")[0] in roots:
                del sys.modules[n]
        sys.modules.update(saved)


_counter = itertools.count()


def load_module(path: str | os.PathLike, *, shadow: bool = False) -> types.ModuleType:
    """Import a port file with the simulator's ``nki`` namespaces (C2N3024 if it cannot load)."""
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise DiagnosticError(make("C2N3024", SourceLoc(p, 0, 0), path=p, reason="no such file"))
    modname = f"_cuda2nki_port_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(modname, p)
    if spec is None or spec.loader is None:
        raise DiagnosticError(
            make("C2N3024", SourceLoc(p, 0, 0), path=p, reason="not a Python file")
        )
    mod = importlib.util.module_from_spec(spec)
    with nki_namespace(shadow=shadow):
        try:
            spec.loader.exec_module(mod)
        except DiagnosticError:
            raise
        except SyntaxError as exc:
            raise DiagnosticError(
                make(
                    "C2N3024",
                    SourceLoc(p, exc.lineno or 0, exc.offset or 1),
                    path=p,
                    reason=f"syntax error: {exc.msg}",
                )
            ) from None
        except Exception as exc:  # noqa: BLE001 - the port's import failed
            loc = _kernel.port_exception_loc(exc)
            raise DiagnosticError(
                make("C2N3024", loc, path=p, reason=f"{type(exc).__name__}: {exc}")
            ) from None
    return mod


def load_kernel(
    path: str | os.PathLike, name: str | None = None, *, shadow: bool = False
) -> _kernel.Kernel:
    """Load the NKI kernel ``name`` (or the only ``@nki.jit`` kernel) from a port file."""
    p = os.fspath(path)
    mod = load_module(p, shadow=shadow)
    if name is not None:
        obj = mod.__dict__.get(name)
        if obj is None:
            raise DiagnosticError(
                make("C2N3024", SourceLoc(p, 0, 0), path=p, reason=f"no kernel named '{name}'")
            )
        if isinstance(obj, _kernel.Kernel):
            return obj
        if callable(obj):
            return _kernel.Kernel(obj, legacy=_kernel._guess_legacy(obj))
        raise DiagnosticError(
            make("C2N3024", SourceLoc(p, 0, 0), path=p, reason=f"'{name}' is not a function")
        )
    found = [(k, v) for k, v in mod.__dict__.items() if isinstance(v, _kernel.Kernel)]
    if len(found) == 1:
        return found[0][1]
    if not found:
        raise DiagnosticError(
            make("C2N3024", SourceLoc(p, 0, 0), path=p, reason="no @nki.jit kernel found")
        )
    raise DiagnosticError(
        make(
            "C2N3024",
            SourceLoc(p, 0, 0),
            path=p,
            reason=f"several kernels ({', '.join(k for k, _ in found)}); pass a name",
        )
    )
