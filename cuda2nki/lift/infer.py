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

import re
from collections.abc import Callable

from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.frontend import ast as A
from cuda2nki.lift import affine as af
from cuda2nki.lift.allocshape import bounds_above, from_allocations, from_declarations
from cuda2nki.lift.chosensizes import KEY as CHOSEN
from cuda2nki.lift.chosensizes import chosen_sizes
from cuda2nki.lift.constlaunch import scale_constant_launch
from cuda2nki.lift.dataindex import data_ranges, data_shapes, syntax_shape_note
from cuda2nki.lift.declshape import from_written_extents
from cuda2nki.lift.defaultlaunch import default_block, default_grid
from cuda2nki.lift.dynshared import dynamic_shared_extents
from cuda2nki.lift.extentwhy import unsized_reason
from cuda2nki.lift.gatherrows import default_rows, rows_of_ranges
from cuda2nki.lift.indexshape import _int_or, canon_cond, poly_text, shape_of_accesses
from cuda2nki.lift.lanesplit import lane_split, record_shapes
from cuda2nki.lift.loadwalk import loads_in as _loads_in
from cuda2nki.lift.openlaunch import (
    OPEN,
    OpenLaunch,
    close_grid,
    from_host,
    positive_launch,
    scalar_bounds,
)
from cuda2nki.lift.paramblock import PINNED, param_block
from cuda2nki.lift.positive import extents_positive, keep_positive
from cuda2nki.lift.privatise import privatised
from cuda2nki.lift.readback import with_reads
from cuda2nki.lift.readonly import const_pointees, const_read
from cuda2nki.lift.recordshapes import member_shapes
from cuda2nki.lift.scalarwrap import wrapped
from cuda2nki.lift.sharedreads import shared_reads, unsized_shared_reads
from cuda2nki.lift.sitechoice import chosen_site
from cuda2nki.lift.symexec import Refusal, dtype_of, execute
from cuda2nki.lift.templategap import missing_template_args
from cuda2nki.lift.zerocounters import zero_counters

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


def _launch(fn: A.Function, site: A.LaunchSite | None, diags: list) -> dict | None:
    """The launch in kernel parameter names: as written, else followed through the host code."""
    if site is None:
        diags.append(
            make(
                "C2N2101",
                fn.loc,
                what="the launch configuration",
                kernel=fn.name,
                why=_no_site_reason(fn),
            )
        )
        return None
    from cuda2nki.lift.hostargs import arg_names

    names = {}
    for name, text in zip(arg_names(fn, site), site.arg_texts):
        if name is not None and text.isidentifier():
            names[text] = name
    names.update(
        {p.name: p.name for p in fn.params if p.name not in names.values() and p.name not in names}
    )
    grid = [render(g, names) for g in site.grid]
    block = [render(b, names) for b in site.block]
    source = "the launch site"
    pb = None
    if any(x is None for x in grid + block) or any(
        not isinstance(_int_or(b), int) for b in block if b is not None
    ):
        pb = param_block(fn, site, grid, block, _host_values(fn, site))
        got = pb and (pb.grid, pb.block, pb.source)
        got = got or _open_launch(fn, site) or positive_launch(_host_launch(fn, site))
        if got is None:
            diags.append(
                make(
                    "C2N2101",
                    site.loc,
                    what="the launch configuration",
                    kernel=fn.name,
                    why=f"'<<<{site.grid_text}, {site.block_text}>>>' uses host values "
                    "that are neither kernel parameters nor constants; add [launch] grid and block",
                )
            )
            return None
        grid, block, source = got
    out = {"grid": [_tidy(g) for g in grid], "block": [_int_or(b) for b in block]}
    if pb is not None and source == pb.source:  # the block's parameters, tied
        out[PINNED] = pb.pinned
    if source == "the launch site":  # a host constant also passed as a size: its parameter
        from cuda2nki.lift.gridnames import grid_in_params

        values = {k: h.value for k, h in _host_values(fn, site).items()}
        out["grid"] = grid_in_params(out["grid"], site.grid_text, names, values)
    if site.shared_bytes is not None:
        smem = _shared_bytes(fn, site)
        if smem is None:
            diags.append(
                make(
                    "C2N2101",
                    site.loc,
                    what="the dynamic shared memory size",
                    kernel=fn.name,
                    why="the launch's third argument uses host values that are neither kernel "
                    "parameters nor constants; add [launch] shared_bytes",
                )
            )
            return None
        out["shared_bytes"] = smem
    if isinstance(source, OpenLaunch):  # run-time grid axes: chosen once the kernel ran
        out[OPEN] = source.open_axes
        out["open_source"] = source.source
        return out
    diags.append(
        make(
            "C2N2100",
            site.loc,
            what=f"launch grid {out['grid']} block {out['block']}",
            kernel=fn.name,
            source=source,
        )
    )
    return out


def _open_launch(fn: A.Function, site: A.LaunchSite) -> tuple[list, list, OpenLaunch] | None:
    """Grid and block of a launch the host sizes at run time (:mod:`cuda2nki.lift.openlaunch`)."""
    got = from_host(fn, site)
    return None if got is None else (got.grid, got.block, got)


def _shared_bytes(fn: A.Function, site: A.LaunchSite) -> str | int | None:
    """The launch's dynamic shared memory bytes in kernel parameter names (or a number)."""
    from cuda2nki.lift.hostargs import arg_names, resolve

    facts = site.host
    if facts is None or facts.shared is None:
        return None
    text = resolve(facts.shared.text, arg_names(fn, site))
    if text is not None and "@" not in text:
        return _int_or(text)
    value = facts.shared.value
    return int(value) if isinstance(value, int | float) else None


def _driver_loaded(fn: A.Function) -> bool:
    """Whether a driver API loader near the kernel loads it by name (its launch exists, in a
    form the source does not show: C2N2101 says so rather than a default launch)."""
    from pathlib import Path

    from cuda2nki.frontend.launchers import module_loaders

    path = Path(fn.loc.file)
    return path.is_file() and bool(module_loaders(path.resolve().parent, [fn.name]))


def _no_site_reason(fn: A.Function) -> str:
    """Why a kernel has no launch site: none in the file, or a driver API launch near it whose
    grid or arguments the source does not show."""
    from pathlib import Path

    from cuda2nki.frontend.launchers import module_loaders

    path = Path(fn.loc.file)
    loaders = module_loaders(path.resolve().parent, [fn.name]) if path.is_file() else []
    if loaders:
        return (
            f"{loaders[0].name} loads it by name (cuModuleGetFunction) but no cuLaunchKernel "
            "there shows its grid, block and arguments (an argument array, not an `extra` "
            "buffer, and the function handle cuModuleGetFunction sets); add [launch] grid and "
            "block"
        )
    return "no <<<grid, block>>> launch site in this file; add [launch] grid and block"


def _host_launch(fn: A.Function, site: A.LaunchSite) -> tuple[list, list, str] | None:
    """Grid and block from the host values of the launch (constants, locals, callers)."""
    from cuda2nki.lift.hostargs import arg_names, resolve

    facts = site.host
    if facts is None:
        return None
    names = arg_names(fn, site)
    grid = [resolve(g.text, names) for g in facts.grid]
    block = [b.value for b in facts.block]
    if any(g is None for g in grid) or any(not isinstance(b, int) for b in block):
        return None
    ev = [e for x in (*facts.grid, *facts.block) for e in x.evidence]
    notes = [n for x in (*facts.grid, *facts.block) for n in x.notes]
    source = "the host code (" + "; ".join(dict.fromkeys(ev[:3])) + ")"
    if notes:
        source += "; " + "; ".join(dict.fromkeys(notes))
    return grid, block, source


def _tidy(text: str) -> str | int:
    return _int_or(text)


def infer_binding(tu: A.TranslationUnit, kernel_name: str) -> tuple[dict, list[Diagnostic]]:
    """Partial binding dict for ``kernel_name`` and diagnostics (inferred / missing items)."""
    fn = next((f for f in tu.kernels if f.name == kernel_name), None)
    diags: list[Diagnostic] = []
    out: dict = {"kernel": kernel_name, "params": {}}
    if fn is None:
        return out, diags
    gap = missing_template_args(fn, kernel_name)
    if gap is not None:
        diags.append(gap)
    site = chosen_site(tu, fn, diags)  # several launching files: the first, with a note
    default = default_block(fn) if site is None and not _driver_loaded(fn) else None
    if default is not None:  # no launch to read: a covering one (its grid set once executed)
        launch: dict | None = {"grid": default_grid(None, default), "block": [default]}
    else:
        launch = _launch(fn, site, diags)
    pinned = launch.pop(PINNED, {}) if launch is not None else {}
    block = None
    if launch is not None and all(isinstance(b, int) for b in launch["block"]):
        block = tuple(launch["block"]) + (1,) * (3 - len(launch["block"]))
    accesses: dict = {}
    prog = None
    refusal = None
    staged: dict = {}  # pointers read only into shared memory (lift.sharedreads)
    host = _host_values(fn, site)
    squares = _squares(fn, launch, host, kernel_name, diags)
    split = None
    fixed = {x: af.sym(s) for x, s in squares.items()}
    fixed.update({x: af.Poly.const(v) for x, v in pinned.items()})  # a block's parameters
    try:
        try:
            prog = execute(tu, privatised(fn), block, ties=fixed)
        except Refusal:
            split = lane_split(tu, fn)  # vector and record values as their lanes, then again
            if split is None:
                raise
            prog = execute(*split[:1], privatised(split[1]), block,
                           ties=fixed)  # fmt: skip
        for st in prog.stores:
            accesses.setdefault(st.tensor, []).append(("w", st.index, st.guard, st.loops))
            if st.accumulate is not None:  # an atomic reads what the host put there
                accesses[st.tensor].append(("r", st.index, st.guard, st.loops))
        for st in prog.stores:
            for ld, folds in _loads_in(st.value, ()):
                accesses.setdefault(ld.tensor, []).append(
                    ("r", ld.index, st.guard, st.loops + folds)
                )
        staged = shared_reads(prog, accesses, _loads_in)
    except Refusal as r:
        refusal = r
    if default is not None and launch is not None:
        launch["grid"] = default_grid(_guard_bound(prog, block, fn), default)
        diags.append(_default_note(fn, launch))
    if launch is not None and OPEN in launch and site is not None:
        bounds = _gid_bounds(prog, block) if prog is not None and block is not None else {}
        close_grid(launch, scalar_bounds(bounds, fn), fn, site, diags)
    ties: dict[str, int] = {}
    every = tuple(a[1] for acc in accesses.values() for a in acc)
    shapes = {
        p.name: shape_of_accesses(accesses.get(p.name, []), block, ties, every)
        for p in fn.params
        if isinstance(p.ty, A.PointerType)
    }
    if split is not None:  # records counted as [n, fields], as their index expressions give
        shapes.update(record_shapes(fn, accesses, block, ties))
    syntax = _from_syntax(fn, launch, shapes, accesses, kernel_name, diags, squares, tu)
    unsized_shared_reads(
        staged, shapes, accesses, lambda a: shape_of_accesses(a, block, ties, every)
    )
    picks = from_allocations(fn, site, shapes, kernel_name, diags, host, accesses)
    from_written_extents(fn, shapes, kernel_name, diags)  # `float img[28][28]`
    defaulted = default_rows(fn, shapes, accesses, block, kernel_name, diags)
    picks.update(defaulted)
    from_declarations(fn, shapes, kernel_name, diags)
    member_shapes(fn, shapes)  # member arrays of one struct array: its record count
    by_data = data_shapes(fn, shapes, syntax, kernel_name, diags)  # lift.dataindex
    if refusal is not None:
        seen = {**accesses, **{n: [("r", None, None, ())] for n in const_pointees(fn)}}
        _refused(refusal, shapes, seen, syntax, kernel_name, diags)
    if launch is not None and prog is not None and block is not None:
        launch["grid"] = _general_grid(launch["grid"], prog, block, host, ties, fn, site, diags)
        out["launch"] = launch
    elif launch is not None:
        out["launch"] = launch
    sizes = _size_names(shapes, launch, fn) - _grid_offsets(shapes, launch, fn)
    steps = _steps(out.get("launch"), prog, block, host, sizes, fn, kernel_name, diags, syntax)
    for p in fn.params:
        if isinstance(p.ty, A.PointerType):
            shape = _tied(shapes[p.name], ties)
            acc = (
                accesses.get(p.name)
                or _syntax_accesses(syntax.get(p.name))
                or _read_only(fn, p.name)
            )
            if not acc and not _mentioned(fn, p.name):
                spec = _unused(p, kernel_name, diags)
            else:
                acc = with_reads(fn, p.name, acc)  # a read execution did not record
                spec = _pointer(p, acc, shape, kernel_name, diags, syntax.get(p.name))
            out["params"][p.name] = spec
        elif p.name in pinned:  # fixed with the block (lift.paramblock)
            out["params"][p.name] = {"tie": str(pinned[p.name])}
        elif p.name in squares:
            out["params"][p.name] = {"tie": squares[p.name]}
        else:
            out["params"][p.name] = _scalar(
                p, host.get(p.name), p.name in sizes, ties, kernel_name, diags
            )
    apart = _stores_apart(prog, block)
    keep_positive(out["params"], sizes - set(ties), set(host), fn, kernel_name, diags)
    _shrink(out["params"], sizes - set(ties), fn, kernel_name, diags, out.get("launch"), apart)
    guarded = 0 not in _unguarded(prog, block)
    grid_was = list(out["launch"]["grid"]) if "launch" in out else None
    scale_constant_launch(
        out["params"], out.get("launch"), fn, guarded, _DEFAULT_ELEMENTS, kernel_name, diags
    )
    data_ranges(out["params"], syntax, by_data, fn, kernel_name, diags)  # lift.dataindex
    guessed = {table for _, table in defaulted.values()}  # rows the index ranges give
    _value_ranges(out["params"], fn, kernel_name, diags, out.get("launch"), guessed)
    zero_counters(out["params"], fn, site, kernel_name, diags, tu)  # slot counters start at 0
    _picked_rows(out["params"], picks, fn, kernel_name, diags)
    rows_of_ranges(out["params"], defaulted, fn, kernel_name, diags)
    _offset_views(out["params"], fn, site, kernel_name, diags)
    if steps:
        _in_steps(out["params"], steps, fn, kernel_name, diags)
        out["check"] = {"multiples": {s.name: s.step for s in steps}}
    grid_now = out["launch"]["grid"] if "launch" in out else None
    chosen = chosen_sizes(out["params"], host, sizes - set(ties), grid_was, grid_now)
    if chosen:  # the check judges size-bound findings at these sizes as notes
        out[CHOSEN] = chosen
    return out, diags


def _squares(fn: A.Function, launch: dict | None, host: dict, kernel: str, diags: list) -> dict:
    """Sizes tied to another by a square stride (:mod:`cuda2nki.lift.squares`), with a note
    each; ``launch``'s grid is rewritten in the sizes they are tied to.  A host that gives the
    two sizes different values keeps them apart."""
    from cuda2nki.lift.squares import square_ties

    found = square_ties(fn, launch) if launch is not None else {}
    out = {}
    for x, s in found.items():
        hx, hs = host.get(x), host.get(s)
        if hx is not None and hs is not None and hx.value != hs.value:
            continue
        out[x] = s
        p = next(q for q in fn.params if q.name == x)
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f'{x} tied to {s} ({x} = {{ tie = "{s}" }})',
                kernel=kernel,
                source=f"the square stride: a row of {s} elements is indexed by a thread index "
                f"that runs to {x}, which another access uses as its row width",
            )
        )
    if out and launch is not None:
        launch["grid"] = [_renamed(g, out) for g in launch["grid"]]
    return out


def _renamed(text: str | int, names: dict) -> str | int:
    import re

    if not isinstance(text, str):
        return text
    return re.sub(r"[A-Za-z_]\w*", lambda m: names.get(m.group(0), m.group(0)), text)


def _value_ranges(
    params: dict,
    fn: A.Function,
    kernel: str,
    diags: list,
    launch: dict | None = None,
    guessed: set[str] | frozenset[str] = frozenset(),
) -> None:
    """Integer inputs whose values index an array get values inside its extent
    (:mod:`cuda2nki.lift.valranges`), with a note; a range the binding has is kept.  The
    ``guessed`` tables' default rows bound no row index: their rows follow the ranges."""
    from cuda2nki.lift.valranges import (
        add_divisor_ranges,
        float_inputs,
        index_ranges,
        local_extents,
        record_range,
        row_extents,
    )

    extents: dict[str, int | str] = dict(local_extents(fn))
    extents.update(dynamic_shared_extents(fn, launch))  # `extern __shared__` (lift.dynshared)
    for name, spec in params.items():
        if isinstance(spec, dict) and spec.get("shape"):
            extents[name] = _flat_extent(spec["shape"])
    extents.update(row_extents(fn, extents))  # ``probs_row[target[i]]``: one row's length
    ints = {
        name
        for name, spec in params.items()
        if isinstance(spec, dict)
        and spec.get("role") in ("in", "inout")
        and str(spec.get("dtype", "")).startswith(("int", "uint"))
        and "range" not in spec
    }
    for r in index_ranges(fn, extents, ints | float_inputs(params), guessed):
        why = f"its use as an index of '{r.target}' ({r.loc.file}:{r.loc.line})"
        why += "".join(f" and of '{o}'" for o in r.others)  # the smallest extent (valranges)
        record_range(params, fn, r, kernel, why, diags)
    add_divisor_ranges(params, fn, ints, kernel, diags)


def _picked_rows(params: dict, picks: dict, fn: A.Function, kernel: str, diags: list) -> None:
    """Integer inputs whose values pick rows of a gather table sized by its allocation take
    values among its rows (a range the binding has is kept)."""
    from cuda2nki.lift.valranges import IndexRange, record_range

    for name, (rows, table) in picks.items():
        spec = params.get(name)
        if not isinstance(spec, dict) or "range" in spec or spec.get("role") not in ("in", "inout"):
            continue
        r = IndexRange(name, 0, rows, table, fn.loc)
        why = f"its use as a row of '{table}', whose rows its shape counts"
        record_range(params, fn, r, kernel, why, diags)


def _offset_views(params: dict, fn: A.Function, site, kernel: str, diags: list) -> None:
    """A pointer launched as ``d_in + RADIUS`` (:mod:`cuda2nki.lift.offsets`): the binding
    names the buffer (its shape, ``offset`` elements before the pointer), with a note."""
    from cuda2nki.frontend.offsets import base_shape, launch_offsets

    for name, off in launch_offsets(fn, site).items():
        spec = params.get(name)
        if not isinstance(spec, dict) or not spec.get("shape"):
            continue
        spec["shape"] = base_shape(spec["shape"], off)
        spec["offset"] = off
        if spec.get("role") == "out":  # the elements before the view keep the buffer's values
            spec["role"] = "inout"
        p = next(q for q in fn.params if q.name == name)
        where = f"{site.loc.file}:{site.loc.line}"
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f"'{name}' a view {off} elements into a buffer of shape {spec['shape']}",
                kernel=kernel,
                source=f"the launch argument ({where}); check and the port take the buffer",
            )
        )


def _flat_extent(shape: list) -> int | str:
    if len(shape) == 1:
        return shape[0]
    if all(isinstance(d, int) for d in shape):
        n = 1
        for d in shape:
            n *= d
        return n
    return " * ".join(f"({d})" if isinstance(d, str) else str(d) for d in shape)


def _steps(
    launch, prog, block, host: dict, sizes: set, fn, kernel: str, diags: list, syntax=None
) -> list:
    """The sizes the launch runs the kernel at multiples of (:mod:`cuda2nki.lift.steps`), each
    with a note; check then keeps its generated sizes multiples of them."""
    from cuda2nki.lift.loopsteps import loop_steps, tile_steps
    from cuda2nki.lift.steps import size_steps, unguarded_tiles

    if launch is None:
        return []
    env = {k: h.value for k, h in host.items()}
    loose = unguarded_tiles(syntax or {}) if prog is None else set()
    got = size_steps(launch["grid"], block, sizes, _unguarded(prog, block), env, loose)
    have = {s.name: s.step for s in got}
    tiled = tile_steps(syntax or {}, sizes, env)  # `for (k = 0; k < n; k += BK)`, unguarded
    for s in loop_steps(fn, sizes, env) + tiled:  # `for (t = 0; t < n / TILE; t++)`
        if s.step > have.get(s.name, 1) and s.step % have.get(s.name, 1) == 0:
            got = [g for g in got if g.name != s.name] + [s]
            have[s.name] = s.step
    for s in got:
        p = next(q for q in fn.params if q.name == s.name)
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f"{s.name} a multiple of {s.step} (check chooses its sizes so)",
                kernel=kernel,
                source=s.why,
            )
        )
    return got


def _unguarded(prog, block) -> set[int]:
    """Grid axes no store's guard or enclosing loop bounds (none when the kernel was not
    executed): a thread of such an axis always stores."""
    if prog is None or block is None or not prog.stores:
        return set()
    if any(st.loops for st in prog.stores):
        return set()
    out = set()
    for axis in range(3):
        coords = {af.GID[axis], af.THREAD[axis], af.BLOCK[axis]}
        if not any(str(a) in coords for st in prog.stores for a in _cond_atoms(st.guard, block)):
            out.add(axis)
    return out


def _cond_atoms(c, block) -> set:
    try:
        return canon_cond(c, block).atoms()
    except Exception:  # noqa: BLE001 - a guard that does not canonicalise bounds something
        return {af.GID[0], af.GID[1], af.GID[2]}


def _in_steps(params: dict, steps: list, fn, kernel: str, diags: list) -> None:
    """Round each stepped size's default up to its step (a host default of 100 with blocks of
    16 runs at 112), with a note."""
    for s in steps:
        v = params.get(s.name)
        if not isinstance(v, int) or isinstance(v, bool) or v % s.step == 0:
            continue
        params[s.name] = max(-(-v // s.step), 1) * s.step
        p = next(q for q in fn.params if q.name == s.name)
        what = f"{s.name} = {params[s.name]} (a multiple of {s.step})"
        diags.append(make("C2N2100", p.loc, what=what, kernel=kernel, source="its step"))


def _shrink(
    params: dict,
    free: set[str],
    fn: A.Function,
    kernel: str,
    diags: list,
    launch: dict | None = None,
    apart: Callable[[dict], bool] | None = None,
) -> None:
    """Halve the largest free size until the largest tensor holds at most ``_DEFAULT_ELEMENTS``:
    a host's production sizes are too large to simulate, and check adds the sizes that matter
    (ragged tails, several tiles) itself.  Guards keep a smaller size in bounds of the grid; a
    size is not halved where that leaves ``launch`` without a block on some axis (a grid of
    whole 64 KiB pages of the data: ``(4 * n + 65535) / 65536 * 32 / 256`` blocks), nor where
    threads whose stores ``apart`` (sizes -> bool) keeps apart at the host's sizes would store
    to the same element (:mod:`cuda2nki.lift.storealias`)."""
    from cuda2nki.binding import eval_c_expr
    from cuda2nki.frontend.sizemacros import forced_sizes
    from cuda2nki.lift.sizeproducts import products

    def launches(env: dict) -> bool:
        for g in (launch or {}).get("grid", ()):
            try:
                if int(eval_c_expr(str(g), env)) < 1:
                    return False
            except Exception:  # noqa: BLE001 - a grid the sizes cannot evaluate
                continue
        return True

    # a host size equal to a size macro's value the check chose is small already
    chosen = forced_sizes()
    start = {n: params[n] for n in free if isinstance(params.get(n), int)}
    start = {n: v for n, v in start.items() if v not in chosen}
    env = {n: v for n, v in params.items() if isinstance(v, int | float)}

    def biggest() -> float:
        top = 0.0
        for spec in params.values():
            if isinstance(spec, dict) and _uses(spec.get("shape", ()), start):
                try:
                    n = 1.0
                    for d in spec["shape"]:
                        n *= float(eval_c_expr(d, env))
                    top = max(top, n)
                except Exception:  # noqa: BLE001 - a shape the defaults cannot size
                    return 0.0
        return top

    # a size the host computes as the product of two others (``n = rows * cols``) follows
    # them: halving it alone would leave an index built from the factors outside its tensors
    derived = products(start)
    shrinking = set(start) - set(derived)
    keep_apart = apart is not None and bool(start) and apart(env)
    while derived or shrinking:
        if not shrinking or biggest() <= _DEFAULT_ELEMENTS:
            if not derived or biggest() <= _DEFAULT_ELEMENTS:
                break
            # the factors could not shrink further: the product shrinks alone
            shrinking, derived = set(derived), {}
            continue
        # the largest sizes halve together: sizes the host made equal stay equal (a kernel may
        # rely on it: ``ix < nx`` guarding a row of stride ``ny``), and the choice does not hang
        # on the order of a set
        top = max(env[k] for k in shrinking)
        if top <= 8:
            break
        names = sorted(k for k in shrinking if env[k] == top)
        trial = {**env, **{k: int(env[k]) // 2 for k in names}}
        trial.update({k: trial[b] * trial[c] for k, (b, c) in derived.items()})
        names += sorted(k for k in derived if trial[k] != env[k])
        if not launches(trial) or (keep_apart and apart is not None and not apart(trial)):
            shrinking.difference_update(names)  # no block would run, or threads would collide
            continue
        if not extents_positive(params, trial) and extents_positive(params, env):
            shrinking.difference_update(names)  # a guarded extent would be left empty
            continue
        env.update({k: trial[k] for k in names})
    for name, was in start.items():
        if env[name] != was:
            params[name] = env[name]
            p = next(q for q in fn.params if q.name == name)
            diags.append(
                make(
                    "C2N2100",
                    p.loc,
                    what=f"{name} = {env[name]} (the host's {was} is too large to simulate)",
                    kernel=kernel,
                    source="a smaller test size",
                )
            )


def _stores_apart(prog, block) -> Callable[[dict], bool] | None:
    """Sizes -> whether the executed thread's stores stay apart across threads there (None: the
    kernel was not executed)."""
    from cuda2nki.lift.storealias import collide

    if prog is None or block is None or not prog.stores:
        return None
    return lambda env: not collide(prog.stores, block, env)


def _host_values(fn: A.Function, site: A.LaunchSite | None) -> dict:
    """Parameter name -> the host value passed for it (a HostExpr with a number), if any."""
    from cuda2nki.lift.hostargs import slots

    if site is None or site.host is None:
        return {}
    pointers = {p.name for p in fn.params if isinstance(p.ty, A.PointerType)}
    out = {}
    for s in slots(fn, site):
        h = s.value(site.host)
        if h is not None and h.value is not None and s.param not in pointers:
            out[s.param] = h
    return out


def _from_syntax(
    fn: A.Function,
    launch: dict | None,
    shapes: dict,
    accesses: dict,
    kernel: str,
    diags: list,
    squares: dict | None = None,
    tu: A.TranslationUnit | None = None,
) -> dict:
    """Fill the shapes symbolic execution left open from the kernel's index expressions (see
    :mod:`cuda2nki.lift.extents`); a shape bounded only by the launch geometry gets a note."""
    from cuda2nki.lift.calleeroles import callee_roles
    from cuda2nki.lift.extents import extents, in_scalars

    if all(s is not None for s in shapes.values()) and all(accesses.get(n) for n in shapes):
        return {}
    roles = callee_roles(tu) if tu is not None else None
    found = extents(fn, launch, squares, roles, tu.function if tu is not None else None)
    for name, ext in found.items():
        if shapes.get(name) is None and ext.shape is not None and not ext.ranges:
            p = next(q for q in fn.params if q.name == name)
            shapes[name] = in_scalars(list(ext.shape), p.ty)
            if ext.note:
                diags.append(syntax_shape_note(name, ext, p.loc, kernel))
    return found


def _refused(refusal, shapes: dict, accesses: dict, syntax: dict, kernel: str, diags: list) -> None:
    """Symbolic execution refused the kernel: a note when the index expressions gave every
    pointer's shape and role anyway, else what is missing."""
    whole = all(shapes[n] is not None and (accesses.get(n) or syntax[n].role) for n in shapes)
    if whole:
        diags.append(
            make(
                "C2N2100",
                refusal.loc,
                what="pointer shapes and roles",
                kernel=kernel,
                source=f"their index expressions (the kernel's code is not analysed further: "
                f"{refusal.code})",
            )
        )
        return
    diags.append(
        make(
            "C2N2101",
            refusal.loc,
            what="pointer shapes and roles",
            kernel=kernel,
            why=f"the kernel could not be analysed ({refusal.code})",
        )
    )


def _syntax_accesses(ext) -> list:
    """Role-only access entries for :func:`_pointer` from an :class:`Extent`."""
    if ext is None or ext.role is None:
        return []
    kinds = {"in": ("r",), "out": ("w",), "inout": ("r", "w")}[ext.role]
    return [(k, None, None, ()) for k in kinds]


def _grid_offsets(shapes: dict, launch: dict | None, fn: A.Function) -> set[str]:
    """Scalars named in the grid only, never an upper bound of an index: the row or step a
    host loop passes (``grid.x = (N - (k + 1)) / b`` with ``j > k`` in the kernel) offsets the
    work, it does not size it, so the host's value (its first) is kept."""
    in_shapes = _size_names(shapes, None, fn)
    grid = _size_names({}, launch, fn) - in_shapes
    return {n for n in grid if not bounds_above(fn, n)}


def _size_names(shapes: dict, launch: dict | None, fn: A.Function) -> set[str]:
    """Scalar parameters that size something: named in a shape or in the grid."""
    import re

    texts = [str(d) for s in shapes.values() if s for d in s]
    if launch is not None:
        texts += [str(g) for g in launch["grid"]]
    words = {w for t in texts for w in re.findall(r"[A-Za-z_]\w*", t)}
    return {p.name for p in fn.params if p.name in words}


#: the largest tensor a default size makes (check adds its own larger points where needed)
_DEFAULT_ELEMENTS = 1 << 14


def _scalar(p: A.Param, host, is_size: bool, ties: dict, kernel: str, diags: list):
    """A scalar's default value: the host's, a tied stride, else a default with a note."""
    from cuda2nki.lift.symexec import dtype_of as c_dtype

    floating = c_dtype(p.ty).startswith(("float", "bfloat"))
    empty = None  # a size the host gives as 0 (a value read at run time, say) sizes nothing
    if host is not None and is_size and not floating and int(host.value) <= 0:
        empty, host = host, None
    if host is not None:
        value = host.value
        if not floating:
            value = wrapped(int(value), c_dtype(p.ty))  # as C converts it at the call
        if p.name in ties and value > ties[p.name]:
            value = ties[p.name]
        where = "; ".join(host.evidence[:2]) or "the launch site"
        if host.notes:
            where += "; " + "; ".join(host.notes)
        if not floating and value != int(host.value):
            where += f"; {host.value} converted to {c_dtype(p.ty)}"
        diags.append(
            make("C2N2100", p.loc, what=f"{p.name} = {value}", kernel=kernel, source=where)
        )
        return value
    if p.name in ties:
        value = ties[p.name]
        why = f"the stride it bounds ({value})"
    elif is_size:
        value = 256
        why = "a default size (check chooses further sizes itself)"
        if empty is not None:
            where = "; ".join((*empty.evidence[:2], *empty.notes)) or "the launch site"
            why += f", not the host's {empty.value}, which sizes nothing ({where})"
    else:
        value = 1.0 if floating else 1
        why = "a default: no value in the source; set the real one under [params]"
    diags.append(make("C2N2100", p.loc, what=f"{p.name} = {value}", kernel=kernel, source=why))
    return value


def _general_grid(grid: list, prog, block, host: dict, ties: dict, fn, site, diags) -> list:
    """A grid axis that covers a guard ``gid < bound`` at the host's sizes is written
    ``ceil_div(bound, block)``, so that it follows the sizes check chooses: a constant one, and
    one that has a host constant baked in (``ceil_div(B * T * 768, 256)`` where the host's
    ``C = NH * HS`` is 768 and the kernel guards ``idx < B * NH * T * HS``), which at other
    sizes would launch too few threads or too many."""
    from cuda2nki.binding import eval_c_expr

    env = {k: h.value for k, h in host.items()}
    bounds = _gid_bounds(prog, block)
    out = list(grid)
    for axis, g in enumerate(grid):
        b = bounds.get(axis)
        if b is None or b.is_const:
            continue
        text = poly_text(b)
        if any(name in ties for name in map(str, b.atoms())):
            continue
        want = f"ceil_div({text}, {block[axis]})"
        try:
            size = int(eval_c_expr(str(text), env))
            got = g if isinstance(g, int) else int(eval_c_expr(str(g), env))
        except Exception:  # noqa: BLE001 - a bound over sizes the host does not give
            continue
        if -(-size // block[axis]) == got and (isinstance(g, int) or _baked(str(g), text)):
            out[axis] = want
    return out


def _baked(grid: str, bound: str | int) -> bool:
    """Whether ``grid`` holds a number where ``bound`` has a size name (the host's value of a
    size the kernel takes apart into others)."""
    words = set(re.findall(r"[A-Za-z_]\w*", grid)) - {"ceil_div"}
    return bool(re.search(r"\b\d{2,}\b", grid)) and words < set(
        re.findall(r"[A-Za-z_]\w*", str(bound))
    )


def _uses(shape, names) -> bool:
    import re

    words = {w for d in shape for w in re.findall(r"[A-Za-z_]\w*", str(d))}
    return bool(words & set(names))


def _guard_bound(prog, block, fn: A.Function) -> str | None:
    """The text of the bound ``n`` of a guard ``gid.x < n`` every store shares, when it is in
    the kernel's size parameters (None: no such guard, or the kernel was not executed)."""
    if prog is None or block is None:
        return None
    b = _gid_bounds(prog, block).get(0)
    scalars = {p.name for p in fn.params if isinstance(p.ty, A.ScalarType)}
    if b is None or b.is_const or not all(isinstance(a, str) and a in scalars for a in b.atoms()):
        return None
    return str(poly_text(b))


def _default_note(fn: A.Function, launch: dict) -> Diagnostic:
    why = (
        "a default launch: no host code in the tree launches it, and its work does not depend "
        "on the block's shape (set [launch] grid and block if the kernel needs another)"
    )
    what = f"launch grid {launch['grid']} block {launch['block']}"
    return make("C2N2100", fn.loc, what=what, kernel=fn.name, source=why)


def _gid_bounds(prog, block) -> dict:
    """Axis -> the bound ``hi`` of a guard ``gid.axis < hi`` shared by every store."""
    found: dict = {}
    for st in prog.stores:
        dom = af.domain_of(canon_cond(st.guard, block), set(af.GID))
        if dom is None:
            return {}
        for axis, v in enumerate(af.GID):
            b = dom.bounds.get(v)
            hi = b.hi[0] if b is not None and len(b.hi) == 1 else None
            if hi is None or hi.depends_on(af.THREAD_COORDS):
                found[axis] = None
            elif found.setdefault(axis, hi) != hi:
                found[axis] = None
    return {k: v for k, v in found.items() if v is not None}


def _tied(shape: list | None, ties: dict) -> list | None:
    import re

    if shape is None or not ties:
        return shape
    out = []
    for d in shape:
        if isinstance(d, str):
            d = re.sub(r"[A-Za-z_]\w*", lambda m: str(ties.get(m.group(0), m.group(0))), d)
            d = _int_or(d)
        out.append(d)
    return out


def _read_only(fn: A.Function, name: str) -> list:
    """Role-only read entries for a pointer the kernel only reads, where its reads sit where
    execution did not look (``atomicAdd(&histo[buffer[i]], 1)``: a load inside an index)."""
    from cuda2nki.lift.readonly import only_read

    return [("r", None, None, ())] if only_read(fn, name) else []


def _mentioned(fn: A.Function, name: str) -> bool:
    """Whether the kernel's body uses ``name`` at all."""
    from cuda2nki.frontend.visit import walk

    return any(isinstance(n, A.Name) and n.name == name for n in walk(fn.body))


def _unused(p: A.Param, kernel: str, diags: list) -> dict:
    """A pointer the kernel never uses (a parameter kept for a common signature): a 1-element
    input, so that the port and the check can be called with it."""
    spec = {"dtype": dtype_of(p.ty), "role": "in", "shape": [1]}
    diags.append(
        make(
            "C2N2100",
            p.loc,
            what=f"'{p.name}': {spec['dtype']}, role in, shape [1]",
            kernel=kernel,
            source="its absence: the kernel never uses it",
        )
    )
    return spec


def _pointer(p: A.Param, acc: list, shape: list | None, kernel: str, diags: list, x=None) -> dict:
    spec: dict = {"dtype": dtype_of(p.ty)}
    kinds = {k for k, *_ in acc}
    if kinds:
        spec["role"] = "inout" if kinds == {"r", "w"} else ("out" if kinds == {"w"} else "in")
        if spec["role"] == "out" and p.persistent:  # texels it does not write keep their values
            spec["role"] = "inout"
    elif const_read(p, kernel, diags):
        spec["role"] = "in"
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
    if shape is None:
        diags.append(
            make(
                "C2N2101",
                p.loc,
                what=f"the shape of '{p.name}'",
                kernel=kernel,
                why=f"{unsized_reason(x)}; add `{p.name} = {{ shape = [...] }}`",
            )
        )
    else:
        spec["shape"] = shape
    what = ", ".join(f"{k} {v}" for k, v in spec.items())
    diags.append(
        make("C2N2100", p.loc, what=f"'{p.name}': {what}", kernel=kernel, source="its accesses")
    )
    return spec


def binding_from_inference(tu: A.TranslationUnit, kernel_name: str):
    """A :class:`~cuda2nki.binding.Binding` when inference is complete (with the notes saying
    where each item came from), else None with diagnostics saying what to add."""
    from cuda2nki.binding import binding_from_dict, binding_problems
    from cuda2nki.diagnostics import DiagnosticError, Severity

    partial, diags = infer_binding(tu, kernel_name)
    fn = tu.function(kernel_name)
    loc = fn.loc if fn is not None else A.SourceLoc(tu.file, 1, 1)
    if fn is not None and not any(d.severity >= Severity.WARNING for d in diags):
        try:
            bnd = binding_from_dict(partial, f"{tu.file} (inferred)")
        except DiagnosticError:
            bnd = None
        params = [(p.name, isinstance(p.ty, A.PointerType | A.ArrayType)) for p in fn.params]
        if bnd is not None and not binding_problems(bnd, kernel_name, params):
            return bnd, diags
    diags.append(
        make(
            "C2N2023",
            loc,
            kernel=kernel_name,
            what="no binding given; the inferred parts are listed above, add the "
            "missing ones to a kernel.toml (`cuda2nki bind` writes one)",
        )
    )
    return None, diags
