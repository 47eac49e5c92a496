"""Binding inference: what a kernel's pointers are, from its launch site and index expressions.

``infer_binding(tu, kernel)`` returns a partial binding dict in the sidecar format
(``{"kernel", "launch": {"grid", "block"}, "params": {...}}``) and diagnostics saying exactly what
it inferred (C2N2100) and what is missing (C2N2101):

* launch: the ``<<<grid, block>>>`` of the kernel's launch site, rewritten in the kernel's
  parameter names (host arguments that are plain names map to the parameter they are passed
  as); a host local the front end could not see through is reported as missing;
* role per pointer: written only -> ``out``, read and written -> ``inout``, read only -> ``in``;
* dtype per pointer: its pointee type;
* shape per pointer: from the accesses of one symbolically executed thread: the flat offsets are
  affine in the iteration variables, whose ranges come from guards (``i < n``) and loop bounds;
  a row stride equal to the inner range gives a 2-D shape (``[rows, C]``), else the extent of the
  largest offset (``[n]``);
* scalar values cannot be inferred: they are reported as missing.
"""

from __future__ import annotations

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.symexec import Refusal, dtype_of, execute

_C_OPS = {"+", "-", "*", "/", "%"}


def render(e: A.Expr, names: dict) -> str | None:
    """C integer expression text in kernel parameter names; None if not expressible."""
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.Name):
        return names.get(e.name)
    if isinstance(e, A.Binary) and e.op in _C_OPS:
        a, b = render(e.left, names), render(e.right, names)
        return None if a is None or b is None else f"({a} {e.op} {b})"
    if isinstance(e, A.Cast):
        return render(e.operand, names)
    if isinstance(e, A.Call) and e.func in ("ceil_div", "div_up", "cdiv") and len(e.args) == 2:
        a, b = render(e.args[0], names), render(e.args[1], names)
        return None if a is None or b is None else f"ceil_div({a}, {b})"
    return None


def _launch(tu: A.TranslationUnit, fn: A.Function, diags: list) -> dict | None:
    sites = [s for s in tu.launch_sites if (s.instance or s.kernel) == fn.name]
    if not sites:
        diags.append(
            make(
                "C2N2101",
                fn.loc,
                what="the launch configuration",
                kernel=fn.name,
                why="no <<<grid, block>>> launch site in this file; add [launch] grid and block",
            )
        )
        return None
    site = sites[0]
    names = {}
    for p, text in zip(fn.params, site.arg_texts):
        if text.isidentifier():
            names[text] = p.name
    names.update(
        {p.name: p.name for p in fn.params if p.name not in names.values() and p.name not in names}
    )
    grid = [render(g, names) for g in site.grid]
    block = [render(b, names) for b in site.block]
    if any(x is None for x in grid + block):
        diags.append(
            make(
                "C2N2101",
                site.loc,
                what="the launch configuration",
                kernel=fn.name,
                why=f"'<<<{site.grid_text}, {site.block_text}>>>' uses host values "
                "that are not kernel parameters; add [launch] grid and block",
            )
        )
        return None
    out = {"grid": [_tidy(g) for g in grid], "block": [_int_or(b) for b in block]}
    diags.append(
        make(
            "C2N2100",
            site.loc,
            what=f"launch grid {out['grid']} block {out['block']}",
            kernel=fn.name,
            source="the launch site",
        )
    )
    return out


def _tidy(text: str) -> str | int:
    return _int_or(text)


def _int_or(text: str) -> str | int:
    try:
        from cuda2nki.binding import eval_c_expr

        return int(eval_c_expr(text, {}))
    except Exception:  # noqa: BLE001 - symbolic: keep the expression
        return text


def infer_binding(tu: A.TranslationUnit, kernel_name: str) -> tuple[dict, list[Diagnostic]]:
    """Partial binding dict for ``kernel_name`` and diagnostics (inferred / missing items)."""
    fn = next((f for f in tu.kernels if f.name == kernel_name), None)
    diags: list[Diagnostic] = []
    out: dict = {"kernel": kernel_name, "params": {}}
    if fn is None:
        return out, diags
    launch = _launch(tu, fn, diags)
    if launch is not None:
        out["launch"] = launch
    block = None
    if launch is not None and all(isinstance(b, int) for b in launch["block"]):
        block = tuple(launch["block"]) + (1,) * (3 - len(launch["block"]))
    accesses: dict = {}
    try:
        prog = execute(tu, fn, block)
        for st in prog.stores:
            accesses.setdefault(st.tensor, []).append(("w", st.index, st.guard, st.loops))
        for st in prog.stores:
            for ld, folds in _loads_in(st.value, ()):
                accesses.setdefault(ld.tensor, []).append(
                    ("r", ld.index, st.guard, st.loops + folds)
                )
    except Refusal as r:
        diags.append(
            make(
                "C2N2101",
                r.loc,
                what="pointer shapes and roles",
                kernel=kernel_name,
                why=f"the kernel could not be analysed ({r.code})",
            )
        )
        prog = None
    for p in fn.params:
        if isinstance(p.ty, A.PointerType):
            out["params"][p.name] = _pointer(p, accesses.get(p.name, []), block, kernel_name, diags)
        else:
            diags.append(
                make(
                    "C2N2101",
                    p.loc,
                    what=f"a value for scalar '{p.name}'",
                    kernel=kernel_name,
                    why=f"scalar values are not in the source; add `{p.name} = ...` under [params]",
                )
            )
    return out, diags


def _loads_in(e, folds: tuple):
    """Loads of a value with the folds around them (as loop contexts: variable and trips)."""
    from cuda2nki.lift import values as V
    from cuda2nki.lift.symexec import LoopCtx

    if isinstance(e, V.Load):
        yield e, folds
        return
    if isinstance(e, V.Fold):
        folds = folds + (LoopCtx(e.var, e.stop, af.TRUE),)
    for k in V.children(e):
        yield from _loads_in(k, folds)


def _pointer(p: A.Param, acc: list, block, kernel: str, diags: list) -> dict:
    spec: dict = {"dtype": dtype_of(p.ty)}
    kinds = {k for k, *_ in acc}
    if kinds:
        spec["role"] = "inout" if kinds == {"r", "w"} else ("out" if kinds == {"w"} else "in")
    else:
        diags.append(
            make(
                "C2N2101",
                p.loc,
                what=f"the role of '{p.name}'",
                kernel=kernel,
                why="it is never accessed",
            )
        )
    shape = _shape(acc, block)
    if shape is None:
        diags.append(
            make(
                "C2N2101",
                p.loc,
                what=f"the shape of '{p.name}'",
                kernel=kernel,
                why="its offsets are not bounded by guards or loop bounds; add "
                f"`{p.name} = {{ shape = [...] }}`",
            )
        )
    else:
        spec["shape"] = shape
    what = ", ".join(f"{k} {v}" for k, v in spec.items())
    diags.append(
        make("C2N2100", p.loc, what=f"'{p.name}': {what}", kernel=kernel, source="its accesses")
    )
    return spec


def _shape(acc: list, block) -> list | None:
    best = None
    for _, index, guard, loops in acc:
        s = _shape_of(index, guard, loops, block)
        if s is None:
            continue
        if best is None or len(s) > len(best):
            best = s
    return best


def _shape_of(index: Poly, guard, loops, block) -> list | None:
    idx = af.canonical(index, block)
    g = guard
    bounds: dict = {lc.var: lc.extent for lc in loops}
    dom = af.domain_of(
        _canon_cond(g, block), set(af.GID) | set(af.THREAD) | set(af.BLOCK) | set(bounds)
    )
    if dom is not None:
        for v, b in dom.bounds.items():
            if len(b.hi) == 1 and not b.hi[0].depends_on(af.THREAD_COORDS):
                bounds[v] = b.hi[0]
    aff = af.affine(idx, set(bounds) | set(af.GID) | set(af.THREAD) | set(af.BLOCK))
    if aff is None or not aff.coeffs or any(v not in bounds for v in aff.coeffs):
        return None
    if aff.const.depends_on(af.THREAD_COORDS):
        return None
    unit = [v for v, c in aff.coeffs.items() if c == af.ONE]
    if len(unit) == 1:
        inner = bounds[unit[0]]
        rows = [v for v, c in aff.coeffs.items() if c == inner]
        if rows and len(aff.coeffs) == 2:
            return [_text(bounds[rows[0]]), _text(inner)]
    top = aff.const
    for v, c in aff.coeffs.items():
        top = top + c * (bounds[v] - 1)
    return [_text(top + 1)]


def _canon_cond(c, block):
    from cuda2nki.lift.finalize import _map_cond

    return _map_cond(c, lambda p: af.canonical(p, block))


def _text(p: Poly) -> str | int:
    return p.const_value if p.is_const else str(p).replace(" ", "")


def binding_from_inference(tu: A.TranslationUnit, kernel_name: str):
    """A :class:`~cuda2nki.binding.Binding` when inference is complete, else None; scalar values
    are never inferred, so this returns None with diagnostics saying what to add."""
    partial, diags = infer_binding(tu, kernel_name)
    diags.append(
        make(
            "C2N2023",
            tu.function(kernel_name).loc
            if tu.function(kernel_name)
            else A.SourceLoc(tu.file, 1, 1),
            kernel=kernel_name,
            what="no binding given; the inferred parts are listed above, add the "
            "missing ones to a kernel.toml",
        )
    )
    return None, diags
