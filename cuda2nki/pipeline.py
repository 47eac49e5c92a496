"""The port pipeline: CUDA file -> AST -> intent IR -> passes -> scheduled IR -> NKI source.

One linear function per stage, with named stop points (``emit``: ``ast``, ``intent``, ``tiles``,
``nki``).  :func:`port_file` is what ``cuda2nki port`` and ``cuda2nki.api.port`` call; :func:`port_intent`
runs passes and code generation on an intent kernel the caller already has.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cuda2nki.codegen.globalnote import global_memory_note
from cuda2nki.diagnostics import Diagnostic, DiagnosticError, Severity, SourceLoc, make
from cuda2nki.frontend.offsets import rebased
from cuda2nki.ir.nodes import Kernel
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline

EMIT_STAGES = ("ast", "intent", "tiles", "nki")


@dataclass(frozen=True)
class PortResult:
    """Outcome of porting one kernel.  ``source`` is None when the kernel was refused."""

    kernel: str
    source: str | None
    diagnostics: tuple[Diagnostic, ...] = ()
    idiom: str | None = None
    literal: bool = False
    ir_intent: Kernel | None = None
    ir_tiles: Kernel | None = None
    tu: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        unique = tuple(dict.fromkeys(self.diagnostics))  # one report per finding
        object.__setattr__(self, "diagnostics", unique)

    @property
    def ok(self) -> bool:
        return self.source is not None and not self.literal

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def port_intent(
    intent: Kernel,
    *,
    target: str = "nki",
    passes: str | None = None,
    source_name: str = "kernel.cu",
    header: Iterable[str] = (),
    defaults: Mapping[str, object] | None = None,
    shapes: Mapping[str, tuple[int, ...]] | None = None,
    after_each: Callable[[Any, Any], None] | None = None,
) -> tuple[Kernel, str, list[Diagnostic]]:
    """Run the pass pipeline and code generation on an intent kernel."""
    from cuda2nki.codegen.generate import generate

    numbers = {k: v for k, v in (defaults or {}).items() if isinstance(v, int | float)}
    ctx = PassContext(target=target, shapes=dict(shapes or {}), scalars=numbers)
    scheduled = intent
    for p in parse_pipeline(passes):
        try:
            scheduled = run_pipeline(scheduled, [p], ctx, after_each)
        except DiagnosticError:
            raise
        except Exception as exc:  # noqa: BLE001 - a pass bug is a diagnostic, never a traceback
            raise DiagnosticError(
                make("C2N2512", intent.loc, name=p.name, reason=f"{type(exc).__name__}: {exc}")
            ) from None
    if not scheduled.is_scheduled and any(True for _ in scheduled.body):
        raise DiagnosticError(
            make(
                "C2N2512",
                intent.loc,
                name="lower-tiles",
                reason="the pipeline did not schedule the kernel",
            )
        )
    notes = [*header, *(f"{d.code}: {d.message}" for d in ctx.diagnostics if d.loc.line <= 0)]
    try:
        src = generate(
            scheduled,
            target,
            source_name=source_name,
            header=notes,
            defaults=dict(defaults or {}),
            inline=[d for d in ctx.diagnostics if d.loc.line > 0],
        )
    except (ValueError, KeyError, TypeError) as exc:  # a construct the emitter cannot spell
        raise DiagnosticError(
            make("C2N2512", intent.loc, name="codegen", reason=f"{type(exc).__name__}: {exc}")
        ) from None
    _runnable(src, intent)
    return scheduled, src, ctx.diagnostics


def _runnable(src: str, intent: Kernel) -> None:
    """No port that would stop at a name it never bound (C2N2512 instead)."""
    from cuda2nki.codegen.unbound import unbound_reads

    bad = unbound_reads(src)
    if bad:
        first = bad[0]
        why = f"the generated code reads '{first.name}' before binding it (port line {first.line})"
        raise DiagnosticError(make("C2N2512", intent.loc, name="codegen", reason=why))


def resolve_binding(path: str | os.PathLike, binding: Any, tu: Any, kernel: str | None) -> Any:
    """The binding of ``kernel`` (see :func:`binding_for`), without the notes."""
    return binding_for(path, binding, tu, kernel)[0]


def binding_for(
    path: str | os.PathLike, binding: Any, tu: Any, kernel: str | None
) -> tuple[Any, list[Diagnostic]]:
    """The binding of ``kernel`` and notes on where it came from.

    ``binding`` (a :class:`Binding`, a :class:`BindingFile` or a ``.toml`` path: C2N0007 when it
    binds other kernels only), else the sidecar ``.toml``'s entry for the kernel, else inference from the source
    (C2N0008 says so when a sidecar binds other kernels only; C2N2502 when inference cannot say).
    The binding must validate against the kernel's parameters (C2N0003; C2N2502 when inferred):
    no port is made from a binding it could not run with."""
    from cuda2nki.binding import Binding, BindingFile, another_kernel, load_bindings, names_kernel

    if isinstance(binding, Binding):
        if binding.kernel is not None and kernel is not None:
            if not names_kernel(binding.kernel, kernel, tu):
                raise another_kernel(BindingFile(binding.path, (binding,)), kernel, binding.line)
        _validate(binding, tu, kernel)
        return binding, []
    if binding is not None:
        bf = binding if isinstance(binding, BindingFile) else load_bindings(binding)
        bnd = _entry(bf, tu, kernel, explicit=True)
        _validate(bnd, tu, kernel)
        return bnd, []
    sidecar = Path(path).with_suffix(".toml")
    notes = []
    if sidecar.is_file():
        bf = load_bindings(sidecar)
        got = _entry(bf, tu, kernel, explicit=False)
        if got is not None:
            _validate(got, tu, kernel)
            return got, []
        loc = SourceLoc(str(sidecar), 1, 1)
        notes.append(make("C2N0008", loc, path=sidecar.name, kernel=kernel, known=bf.describe()))
    try:
        return _inferred(path, tu, kernel), notes
    except DiagnosticError as exc:
        raise DiagnosticError([*notes, *exc.diagnostics]) from None


def _entry(bf: Any, tu: Any, kernel: str | None, *, explicit: bool) -> Any:
    """The entry of ``bf`` for ``kernel``; without a kernel, its only entry (C2N0002 if several).
    None for a sidecar without an entry; C2N0007 for an explicit binding without one."""
    from cuda2nki.binding import another_kernel, several_kernels

    if kernel is None:
        only = bf.only()
        if only is None:
            raise several_kernels(bf)
        return only
    got = bf.for_kernel(kernel, tu, explicit=explicit)
    if got is None and explicit:
        raise another_kernel(bf, kernel)
    return got


def _params(tu: Any, kernel: str | None, binding: Any) -> tuple[str, list[tuple[str, bool]]] | None:
    """The kernel a binding is for and its parameters ((name, is a pointer)); None when unknown."""
    from cuda2nki.frontend.ast import ArrayType, PointerType
    from cuda2nki.frontend.select import select_kernel

    if tu is None:
        return None
    try:
        name = select_kernel(tu, kernel, binding)
    except DiagnosticError:
        return None  # the caller reports the selection itself
    fn = tu.function(name)
    if fn is None:
        return None
    return name, [(p.name, isinstance(p.ty, PointerType | ArrayType)) for p in fn.params]


def _validate(binding: Any, tu: Any, kernel: str | None) -> None:
    """C2N0003 unless ``binding`` validates against the kernel's parameters."""
    from cuda2nki.binding import binding_problems

    got = _params(tu, kernel, binding)
    problems = binding_problems(binding, *got) if got is not None else []
    if problems:
        reason = f"kernel '{got[0]}': " + "; ".join(problems)  # type: ignore[index]
        raise DiagnosticError(
            make("C2N0003", SourceLoc(binding.path, binding.line, 1), reason=reason)
        )


def _inferred(path: str | os.PathLike, tu: Any, kernel: str | None) -> Any:
    """The binding inferred from the source, validated; C2N2502 (with the inference's own
    diagnostics) when it is incomplete."""
    return inferred_binding(path, tu, kernel)[0]


def inferred_binding(
    path: str | os.PathLike, tu: Any, kernel: str | None
) -> tuple[Any, list[Diagnostic]]:
    """The binding inferred from the source, validated, and the inference's notes: which value
    each item got and where from (C2N2100).  C2N2502 (with the inference's own diagnostics)
    when it is incomplete.  Inferred once per parse of the file while parses are remembered
    (:mod:`cuda2nki.frontend.remember`)."""
    from cuda2nki.frontend.remember import remembered_about

    bnd, diags = remembered_about(
        tu, ("inferred binding", str(path), kernel), lambda: _infer_binding(path, tu, kernel)
    )
    return bnd, list(diags)


def _infer_binding(
    path: str | os.PathLike, tu: Any, kernel: str | None
) -> tuple[Any, list[Diagnostic]]:
    from cuda2nki.binding import binding_from_dict, binding_problems

    infer = _optional("cuda2nki.lift", "infer_binding")
    sidecar = Path(path).with_suffix(".toml")
    name = kernel or "?"
    if infer is None or tu is None or kernel is None:
        raise DiagnosticError(
            make(
                "C2N2502",
                SourceLoc(str(path), 1, 1),
                kernel=name,
                missing=f"no --binding, no sidecar {sidecar.name}, and no launch site to infer from",
            )
        )
    data, diags = infer(tu, kernel)
    diags = list(diags or ())
    problems = [d.message for d in diags if d.severity >= Severity.ERROR]
    bnd = None
    if data is not None and not problems:
        try:
            bnd = binding_from_dict(data, f"{path} (inferred)")
        except DiagnosticError as exc:
            problems = [d.message.removeprefix("invalid binding: ") for d in exc.diagnostics]
    if bnd is not None:
        got = _params(tu, kernel, bnd)
        problems = binding_problems(bnd, *got) if got is not None else []
        if not problems:
            return bnd, diags
    fn = tu.function(kernel)
    loc = fn.loc if fn is not None else SourceLoc(str(path), 1, 1)
    missing = "; ".join(problems) or "the launch site and indices do not say"
    raise DiagnosticError([*diags, make("C2N2502", loc, kernel=name, missing=missing)])


def port_file(
    path: str | os.PathLike,
    *,
    binding: Any = None,
    kernel: str | None = None,
    target: str = "nki",
    passes: str | None = None,
    defines: Mapping[str, str] | None = None,
    include_dirs: Iterable[str | os.PathLike] = (),
    emit: str = "nki",
    after_each: Callable[[Any, Any], None] | None = None,
    lowering: str = "auto",
    templates: Mapping[str, str] | None = None,
) -> PortResult:
    """Port one kernel of a CUDA file (see the module docstring for the stages).

    ``lowering``: ``auto`` (a recogniser, else the literal lowering), ``literal`` (force the
    literal lowering, e.g. to measure what recognition buys) or ``recognise`` (never literal)."""
    from cuda2nki.frontend import parse_file
    from cuda2nki.frontend.presence import null_tested

    # 1. front end: CUDA text -> typed AST
    tu = parse_file(path, defines=defines, include_dirs=include_dirs, templates=templates)
    if kernel is None:  # a binding may name the kernel of a file that defines several
        kernel = _binding_kernel(path, binding)
    name = _pick_kernel(tu, kernel, path)
    fn = tu.function(name) if name not in tu.rejected else None
    tested = null_tested(fn) if fn is not None else ()
    if tested and emit != "ast":
        return _port_optional(
            tu,
            name,
            tested,
            path=path,
            binding=binding,
            target=target,
            passes=passes,
            emit=emit,
            after_each=after_each,
            lowering=lowering,
        )
    return _port_parsed(
        tu,
        name,
        path=path,
        binding=binding,
        target=target,
        passes=passes,
        emit=emit,
        after_each=after_each,
        lowering=lowering,
    )


def _port_parsed(
    tu: Any,
    name: str,
    *,
    path: str | os.PathLike,
    binding: Any,
    target: str,
    passes: str | None,
    emit: str,
    after_each: Callable[[Any, Any], None] | None,
    lowering: str,
) -> PortResult:
    """Stages 2-5 of :func:`port_file` on a parsed unit."""
    from cuda2nki import fp64
    from cuda2nki.frontend.pointers import fix_unit
    from cuda2nki.frontend.scope import for_kernel

    if name not in tu.rejected:  # moved pointers become fixed ones (the SIMT runs either)
        tu = fix_unit(tu, name)

    diags: list[Diagnostic] = for_kernel(tu, name)  # other kernels' errors are notes here
    if name in tu.rejected:
        return PortResult(name, None, tuple(diags) + tuple(tu.rejected[name]), tu=tu)
    if emit == "ast":
        return PortResult(name, None, tuple(diags), tu=tu)
    # 2. binding: shapes, dtypes and roles of the pointer parameters (validated: no port is
    # made from a binding it could not run with)
    bnd, notes = binding_for(path, binding, tu, name)
    diags.extend(notes)
    # a float64 kernel is ported as its fp32 twin (the result keeps the unit as written), and
    # a `d_in + RADIUS` launch is ported on the buffer (the result keeps the unit as written:
    # a binding inferred again from it must not count the offset twice)
    work, bnd = _fp32(rebased(tu, name, bnd), name, bnd, diags)
    # 3. lift: AST -> intent IR (a recogniser, else the literal lowering, else a refusal)
    if lowering == "literal" and emit == "nki":
        why = "forced with --lowering literal"
        return _literal(path, work, name, bnd, target, diags, why, tu)
    lifted = _lift(work, name, bnd)
    diags.extend(lifted.get("diagnostics", ()))
    intent: Kernel | None = lifted.get("kernel")
    literal = bool(lifted.get("literal")) or _has_literal(intent)
    if intent is None:
        if lowering != "literal" and emit == "nki":  # a sorting network in shared memory
            net = _network(path, work, name, bnd, target, diags, tu)
            if net is not None:
                return net
        if lowering == "auto" and emit == "nki":
            why = "no idiom recogniser claimed it"
            return _literal(path, work, name, bnd, target, diags, why, tu)
        return PortResult(name, None, tuple(diags), literal=literal, tu=tu)
    idiom = ",".join(sorted({c.idiom.value for c in intent.body if hasattr(c, "idiom")})) or None
    if emit == "intent":
        return PortResult(name, None, tuple(diags), idiom, literal, intent, tu=tu)
    # 4. passes + 5. code generation
    header = _header(path, name, bnd, target, idiom)
    header += global_memory_note(tu.function(name), bnd)
    try:
        scheduled, src, pdiags = port_intent(
            intent,
            target=target,
            passes=passes,
            source_name=Path(path).name,
            header=header,
            defaults=_scalar_defaults(bnd),
            shapes=_binding_shapes(bnd),
            after_each=after_each,
        )
    except DiagnosticError as exc:
        if exc.diagnostic.code.startswith("C2N0"):
            raise
        if lowering == "auto" and emit == "nki":  # recognised, but no scheduled form: literal
            why = _why_given_up(exc.diagnostics)
            given_up = [_given_up(d, _kernel_loc(tu, name, intent)) for d in exc.diagnostics]
            return _literal(path, work, name, bnd, target, [*diags, *given_up], why, tu)
        return PortResult(
            name, None, tuple(diags) + tuple(exc.diagnostics), idiom, literal, intent, tu=tu
        )
    if fp64.was_wide(bnd):  # "as the CUDA kernel did" is untrue of a double accumulator
        pdiags = [d for d in pdiags if d.code != "C2N2510"]
    diags.extend(pdiags)
    diags.extend(_notes(scheduled, bnd))
    return PortResult(name, src, tuple(diags), idiom, literal, intent, scheduled, tu=tu)


def _fp32(tu: Any, name: str, bnd: Any, diags: list[Diagnostic]) -> tuple[Any, Any]:
    """A kernel over float64 tensors is ported as its fp32 twin, with warning C2N2516
    (:mod:`cuda2nki.fp64`); any other kernel is left as it is."""
    from cuda2nki import fp64

    wide = fp64.wide_tensors(bnd) if bnd is not None else ()
    if not wide:
        return tu, bnd
    fn = tu.function(name)
    diags.append(fp64.port_warning(name, wide, fn.loc))
    return fp64.narrowed(tu, bnd)


#: at most this many optional inputs get a port without them (2**k variants)
MAX_OPTIONAL = 2


def _port_optional(tu: Any, name: str, tested: tuple[str, ...], **kw: Any) -> PortResult:
    """Port a kernel whose pointer parameters ``tested`` are tested against null: the kernel
    with all of them present, and (for the ``nki`` stage) one variant per subset of the absent
    inputs, composed into one module whose entry takes those inputs as ``name=None``."""
    from itertools import combinations

    from cuda2nki.codegen.optional import Variant, compose
    from cuda2nki.frontend.presence import StillUsed, specialise_unit

    present = _port_parsed(specialise_unit(tu, name, tested, ()), name, **kw)
    fn = tu.function(name)
    loc = fn.loc if fn is not None else SourceLoc(tu.file, 1, 1)
    if present.source is None or kw["emit"] != "nki":
        return replace(present, tu=tu)
    bnd, _ = binding_for(kw["path"], kw["binding"], tu, name)
    roles = {t.name: t.role for t in bnd.tensors}
    inputs = tuple(t for t in tested if roles.get(t) == "in")
    notes = [
        make("C2N2025", loc, name=t, why="an output is always produced by the port")
        for t in tested
        if roles.get(t) != "in"
    ]
    if len(inputs) > MAX_OPTIONAL:
        why = f"more than {MAX_OPTIONAL} optional inputs: the port takes every one"
        notes += [make("C2N2025", loc, name=t, why=why) for t in inputs]
        inputs = ()
    variants = [Variant(frozenset(), present.source)]
    optional: list[str] = []
    for k in range(1, len(inputs) + 1):
        for absent in combinations(inputs, k):
            try:
                unit = specialise_unit(tu, name, set(tested) - set(absent), absent)
            except StillUsed as exc:
                why = f"it is used outside a null test of it at line {exc.use.loc.line}"
                notes.append(make("C2N2025", exc.use.loc, name=exc.use.name, why=why))
                continue
            lacking = replace(bnd, tensors=tuple(t for t in bnd.tensors if t.name not in absent))
            res = _port_parsed(unit, name, **{**kw, "binding": lacking})
            if res.source is None:
                why = "the kernel without it could not be ported"
                notes += [make("C2N2025", loc, name=t, why=why) for t in absent]
                continue
            variants.append(Variant(frozenset(absent), res.source))
            optional += [t for t in absent if t not in optional]
    if len(variants) == 1:
        return replace(present, diagnostics=(*present.diagnostics, *notes), tu=tu)
    source = compose(name, variants, [t for t in inputs if t in optional])
    done = [make("C2N2024", loc, name=t) for t in optional]
    return replace(present, source=source, diagnostics=(*present.diagnostics, *done, *notes), tu=tu)


def _kernel_loc(tu: Any, name: str, intent: Kernel) -> SourceLoc:
    if intent.loc.line > 0:
        return intent.loc
    fn = tu.function(name)
    return fn.loc if fn is not None else SourceLoc(tu.file, 1, 1)


#: the longest cause quoted in the literal lowering's warning (the note carries all of it)
WHY_CHARS = 160


def _why_given_up(diags: Iterable[Diagnostic]) -> str:
    """Why the literal lowering replaced the recognised form, for its C2N2300 warning: the first
    cause (a pass that failed names itself, C2N2512), shortened; the notes give every cause."""
    first = next(iter(diags), None)
    if first is None:
        return "the recognised form could not be scheduled"
    cause = first.message if len(first.message) <= WHY_CHARS else first.message[:WHY_CHARS] + "..."
    return f"the recognised form could not be scheduled ({first.code}: {cause})"


def _given_up(d: Diagnostic, kernel_loc: SourceLoc) -> Diagnostic:
    """Why the recognised form was given up for the literal lowering: a note, not an error (the
    kernel is still ported), placed at the kernel where the reason has no place of its own."""
    loc = d.loc if d.loc.line > 0 else kernel_loc
    return replace(d, severity=min(d.severity, Severity.NOTE), loc=loc)


def _notes(scheduled: Kernel, binding: Any) -> list[Diagnostic]:
    """Notes on the scheduled port for the binding's sizes (grid -> loops, kept scalars, DMAs)."""
    from cuda2nki.codegen.notes import port_notes

    try:
        r = binding.resolve()
    except DiagnosticError:
        return []
    return port_notes(scheduled, r.scalars, binding.grid, binding.block, r.shapes)


def _literal(
    path: Any,
    tu: Any,
    name: str,
    bnd: Any,
    target: str,
    diags: list[Diagnostic],
    why: str,
    written: Any = None,
) -> PortResult:
    """The generic literal lowering (cuda2nki.lift.literal) of ``tu``: a literal port or a
    refusal; the result keeps the unit as ``written`` (``tu`` unless it is an fp32 twin)."""
    from cuda2nki.codegen.literal import port_literal

    src, more = port_literal(str(path), tu, name, bnd, target, why)
    idiom = "literal" if src is not None else None
    kept = tu if written is None else written
    return PortResult(name, src, (*diags, *more), idiom, src is not None, tu=kept)


def _network(
    path: Any, tu: Any, name: str, bnd: Any, target: str, diags: list[Diagnostic], written: Any
) -> PortResult | None:
    """The tiled port of a compare-exchange sorting network (cuda2nki.codegen.sortnet)."""
    from cuda2nki.codegen.sortnet import port_network

    got = port_network(path, tu, name, bnd, target, _header(path, name, bnd, target, None))
    if got is None:
        return None
    src, more, idiom = got
    kept = [d for d in diags if d.code != "C2N2010"]  # the lifter's refusal: it is claimed now
    return PortResult(name, src, (*kept, *more), idiom, False, tu=written)


def _binding_kernel(path: Any, binding: Any) -> str | None:
    """The kernel the binding names when it binds exactly one (else None: the file's only one)."""
    from cuda2nki.binding import Binding, BindingFile, load_bindings

    if isinstance(binding, Binding):
        return binding.kernel
    if isinstance(binding, BindingFile):
        only = binding.only()
        return only.kernel if only is not None else None
    source = binding if binding is not None else Path(path).with_suffix(".toml")
    if binding is None and not Path(source).is_file():
        return None
    only = load_bindings(source).only()
    return only.kernel if only is not None else None


def _has_literal(intent: Kernel | None) -> bool:
    from cuda2nki.ir.ops import Idiom

    return intent is not None and any(
        getattr(c, "idiom", None) == Idiom.LITERAL for c in intent.body
    )


def _pick_kernel(tu: Any, kernel: str | None, path: Any) -> str:
    names = [f.name for f in tu.kernels] + [
        n for n in tu.rejected if n not in {f.name for f in tu.kernels}
    ]
    if kernel is not None:
        if kernel not in names and any("<" in n for n in [kernel, *names]):
            from cuda2nki.frontend.select import select_kernel  # C++ spellings of instances

            return select_kernel(tu, kernel)
        if kernel not in names:
            raise DiagnosticError(
                make(
                    "C2N2503",
                    SourceLoc(str(path), 1, 1),
                    kernel=kernel,
                    file=str(path),
                    known=", ".join(names) or "none",
                )
            )
        return kernel
    if len(names) == 1:
        return names[0]
    if not names:
        raise DiagnosticError(
            make(
                "C2N2503", SourceLoc(str(path), 1, 1), kernel="(any)", file=str(path), known="none"
            )
        )
    raise DiagnosticError(
        make("C2N2504", SourceLoc(str(path), 1, 1), file=str(path), known=", ".join(names))
    )


def _lift(tu: Any, name: str, binding: Any) -> dict[str, Any]:
    lift_kernel = _optional("cuda2nki.lift", "lift_kernel")
    if lift_kernel is None:
        loc = SourceLoc(tu.file, 1, 1)
        fn = tu.function(name)
        if fn is not None:
            loc = fn.loc
        return {
            "diagnostics": [
                make("C2N2501", loc, kernel=name, construct="the lifter is not available")
            ]
        }
    try:
        res = lift_kernel(tu, name, binding)
    except DiagnosticError as exc:
        return {"diagnostics": exc.diagnostics}
    kernel = None
    for attr in ("kernel_ir", "kernel", "intent", "ir"):
        candidate = getattr(res, attr, None)
        if isinstance(candidate, Kernel):
            kernel = candidate
            break
    # a kernel no recogniser claimed but the lifter still expressed is the literal lowering
    literal = bool(getattr(res, "literal", False)) or (
        kernel is not None and not bool(getattr(res, "claimed", True))
    )
    return {
        "kernel": kernel,
        "literal": literal,
        "diagnostics": list(getattr(res, "diagnostics", ())),
    }


def _optional(module: str, attr: str) -> Any:
    import importlib

    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    return getattr(mod, attr, None)


def _binding_shapes(binding: Any) -> dict[str, tuple[int, ...]]:
    """The binding's default tensor shapes (passes size caches by them); empty if unresolved."""
    try:
        return dict(binding.resolve().shapes)
    except DiagnosticError:
        return {}


def _scalar_defaults(binding: Any) -> dict[str, object]:
    return {s.name: s.value for s in getattr(binding, "scalars", ())}


def _header(path: Any, name: str, binding: Any, target: str, idiom: str | None) -> list[str]:
    from cuda2nki import fp64

    lines = [
        f"NKI port of CUDA kernel '{name}' from {Path(path).name}, generated by cuda2nki ({target} API)."
    ]
    tensors = ", ".join(
        f"{t.name}: {t.dtype}[{', '.join(map(str, t.shape))}] {t.role}" for t in binding.tensors
    )
    lines.append(f"Binding: {tensors}")
    wide = fp64.was_wide(binding)
    if wide:
        lines.append(
            f"float64 in CUDA: {', '.join(wide)} -- float32 here (NKI has no fp64); pass them as "
            "float32 (C2N2516)."
        )
    grid = ", ".join(map(str, binding.grid))
    block = ", ".join(map(str, binding.block))
    lines.append(
        f"Launch: grid ({grid}) x block ({block}) -> loops over 128-partition tiles inside the kernel"
    )
    lines.append("(the current NKI API has no N-D launch grid; CUDA threads became tile elements).")
    if idiom:
        lines.append(f"Idiom: {idiom}")
    return lines


def worst_is_error(diags: Iterable[Diagnostic]) -> bool:
    return any(d.severity == Severity.ERROR for d in diags)
