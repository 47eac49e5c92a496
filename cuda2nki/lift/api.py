"""``lift_kernel``: CUDA AST -> intent IR, or a clean refusal naming what blocked it."""

from __future__ import annotations

import string
from dataclasses import dataclass

from cuda2nki.binding import Binding
from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.frontend import ast as A
from cuda2nki.ir import nodes as N
from cuda2nki.lift.blockperm import unpermuted_blocks
from cuda2nki.lift.capped import with_capped_values
from cuda2nki.lift.idioms import classify
from cuda2nki.lift.intent import Shapes, lower_program
from cuda2nki.lift.intent_shapes import poly_of_text
from cuda2nki.lift.lanesplit import lane_split
from cuda2nki.lift.privatise import privatised
from cuda2nki.lift.repeats import collapse_repeats
from cuda2nki.lift.rng import rng_call, rng_construct
from cuda2nki.lift.symexec import Refusal, dtype_of, execute


@dataclass(frozen=True)
class LiftResult:
    """``kernel_ir`` (intent layer) when ``claimed``; ``idiom`` names the kernel's idiom family
    (``map``, ``reduce``, ``contract``, ...); ``diagnostics`` say why a kernel was refused."""

    kernel_ir: N.Kernel | None
    idiom: str | None
    diagnostics: tuple[Diagnostic, ...]
    claimed: bool


def refusal_diagnostic(r: Refusal, kernel: str) -> Diagnostic:
    """The diagnostic for a refusal (missing template fields are filled, never a crash)."""
    from cuda2nki.diagnostics import rule

    fields = {f for _, f, _, _ in string.Formatter().parse(rule(r.code).message) if f}
    fmt = {k: "?" for k in fields}
    fmt.update({k: v for k, v in r.fmt.items() if k in fields})
    fmt["kernel"] = kernel
    if "what" in fields and "what" not in r.fmt and r.fmt:
        fmt["what"] = "; ".join(f"{k}: {v}" for k, v in r.fmt.items())
    return make(r.code, r.loc, **fmt)


def find_kernel(tu: A.TranslationUnit, name: str) -> A.Function | None:
    cands = [f for f in tu.functions if f.name == name and f.kind == "global"]
    for f in cands:  # an instantiation (or a plain kernel) before an uninstantiated template
        if not f.template_params or f.template_args:
            return f
    return None


def tied_sizes(binding: Binding) -> dict:
    """Size parameter -> the polynomial it is tied to (binding ``M = { tie = "K" }``)."""
    return {s.name: poly_of_text(s.tie) for s in binding.scalars if s.tie is not None}


def shapes_from_binding(binding: Binding, fn: A.Function) -> Shapes:
    points = binding.test_points()
    try:
        ties = tied_sizes(binding)
        grid = tuple(poly_of_text(g).subs(ties) for g in binding.grid) + (poly_of_text(1),) * (
            3 - len(binding.grid)
        )
        tensors = {
            t.name: tuple(poly_of_text(d).subs(ties) for d in t.shape) for t in binding.tensors
        }
    except ValueError as exc:  # `max(1, 2048 / block_size)`: a size, but not a polynomial
        raise Refusal(
            "C2N2010", fn.loc, what=f"a launch or shape size the lifter cannot reason about ({exc})"
        ) from None
    blocks = {tuple(binding.resolve(_only_known(binding, p)).block) for p in points}
    if len(blocks) != 1:
        raise Refusal(
            "C2N2023",
            fn.loc,
            what="the launch block size changes between test "
            "points; cooperative code is lifted for one block size",
        )
    block = blocks.pop()
    ranges = {}
    for t in binding.tensors:
        if t.range is not None and t.dtype.startswith(("int", "uint")):
            try:
                ranges[t.name] = (poly_of_text(t.range[0]), poly_of_text(t.range[1]))
            except ValueError:
                pass
    capped = {a for p in (*grid, *(d for ds in tensors.values() for d in ds)) for a in p.atoms()}
    points = [with_capped_values(p, capped) for p in points]
    return Shapes(tensors, grid, tuple(int(b) for b in block), points, ranges)


def _only_known(binding: Binding, point: dict) -> dict:
    names = {s.name for s in binding.scalars}
    return {k: v for k, v in point.items() if k in names}


def _lift_body(
    tu: A.TranslationUnit, fn: A.Function, binding: Binding, shapes: Shapes, kernel_name: str
) -> tuple[N.Kernel, str]:
    """The intent IR of ``fn`` and its idiom (raises :class:`Refusal`)."""
    fn = unpermuted_blocks(fn, shapes.grid, shapes.points)  # diagonal block orders
    fn = privatised(fn)  # shared accumulators of loops become registers
    fn = collapse_repeats(fn)  # a loop repeating the same stores is one pass of them
    prog = execute(tu, fn, shapes.block, ties=tied_sizes(binding))
    if not prog.stores:
        raise Refusal("C2N2020", fn.loc)
    roles = {t.name: t.role for t in binding.tensors}
    dtypes = {t.name: t.dtype for t in binding.tensors}
    for p in fn.params:
        if isinstance(p.ty, A.PointerType) and p.name not in roles:
            raise Refusal("C2N2023", p.loc, what=f"no binding for pointer '{p.name}'")
    scalar_types = {p.name: dtype_of(p.ty) for p in fn.params if isinstance(p.ty, A.ScalarType)}
    try:
        kernel = lower_program(prog, shapes, kernel_name, roles, dtypes, scalar_types)
    except Refusal:
        if not prog.rerolled:
            raise
        # the rolled-back loop does not lower: the iterations' stores one by one
        prog = execute(tu, fn, shapes.block, reroll=False, ties=tied_sizes(binding))
        kernel = lower_program(prog, shapes, kernel_name, roles, dtypes, scalar_types)
    return classify(kernel)


def lift_kernel(
    tu: A.TranslationUnit, kernel_name: str, binding: Binding | None = None
) -> LiftResult:
    """Lift one kernel of ``tu`` to intent IR.

    With no ``binding`` the binding is inferred (:func:`cuda2nki.lift.infer.infer_binding`); if
    that leaves shapes or the launch unknown the kernel is refused with ``C2N2023`` saying what to
    add.  Never raises for a bad kernel: every failure is a diagnostic in the result."""
    fn = find_kernel(tu, kernel_name)
    if fn is None:
        diags = tuple(tu.rejected.get(kernel_name, ()))
        if not diags:
            r = Refusal("C2N2010", SourceLoc(tu.file, 1, 1), what="no such __global__ kernel")
            diags = (refusal_diagnostic(r, kernel_name),)
        return LiftResult(None, None, diags, False)
    notes: list[Diagnostic] = []
    drawn = rng_call(tu, fn)
    if drawn is not None:
        r = Refusal("C2N2010", drawn.loc, what=rng_construct(drawn))
        return LiftResult(None, None, (refusal_diagnostic(r, kernel_name),), False)
    try:
        if binding is None:
            from cuda2nki.lift.infer import binding_from_inference

            binding, notes = binding_from_inference(tu, kernel_name)
            if binding is None:
                return LiftResult(None, None, tuple(notes), False)
        shapes = shapes_from_binding(binding, fn)
        try:
            kernel, idiom = _lift_body(tu, fn, binding, shapes, kernel_name)
        except Refusal:
            split = lane_split(tu, fn)  # vectors and records as their lanes, then again
            if split is None:
                raise
            try:
                kernel, idiom = _lift_body(*split, binding, shapes, kernel_name)
            except (Refusal, RecursionError):
                split = None
            if split is None:
                raise
    except Refusal as r:
        return LiftResult(None, None, tuple(notes) + (refusal_diagnostic(r, kernel_name),), False)
    except RecursionError:
        r = Refusal("C2N2010", fn.loc, what="expressions too deep to analyse")
        return LiftResult(None, None, tuple(notes) + (refusal_diagnostic(r, kernel_name),), False)
    done = make("C2N2001", fn.loc, kernel=kernel_name, idiom=idiom)
    return LiftResult(kernel, idiom, tuple(notes) + (done,), True)
