"""Spell a literal program (:mod:`cuda2nki.lift.literal`) as an NKI module.

The module is ``templates/<target>/literal_module.py.j2`` (imports, the thread layout constants
and the small trace-time helpers every literal port uses: strided DMA views with ragged bounds,
guarded stores, index tiles) around the kernel; each instruction is one macro of
``templates/<target>/literal_ops.j2``; the target-independent helpers are
``templates/literal_common.py.j2``.  Both targets have a literal form: ``nki`` spells strided
views with ``tensor.ap``, ``legacy`` with ``nl.arange`` index expressions and ``mask=``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cuda2nki.codegen import spell
from cuda2nki.codegen.globalnote import global_memory_note
from cuda2nki.codegen.render import environment
from cuda2nki.codegen.suppress import DATA_ADDRESS, DATA_ADDRESS_IDS, comment
from cuda2nki.lift.literal.program import Branch, Instr, LiteralProgram, Loop, Node

TARGETS = ("nki", "legacy")
_INDENT = "    "


def _ops(target: str):  # noqa: ANN202
    return environment().get_template(f"{target}/literal_ops.j2").module


def _lines(nodes: Iterable[Node], ops, depth: int, source_name: str) -> list[str]:  # noqa: ANN001
    out: list[str] = []
    pad = _INDENT * depth
    for n in nodes:
        if isinstance(n, Instr):
            if n.kind == "comment" and n.line:
                continue  # the line is carried by the instruction comments below
            text = str(getattr(ops, n.kind)(**dict(n.operands))).strip()
            if n.line and n.kind not in ("comment",):
                text += f"  # from {source_name}:{n.line}"
            out.append(pad + text)
        elif isinstance(n, Branch):
            # a branch whose code lowers to nothing (`if (flag) __syncthreads();`) keeps a body
            then = _lines(n.then, ops, depth + 1, source_name)
            orelse = _lines(n.else_, ops, depth + 1, source_name)
            out.append(pad + str(ops.branch(n.cond)).strip())
            out.extend(then or [_INDENT * (depth + 1) + "pass"])
            if orelse:
                out.append(pad + str(ops.orelse()).strip())
                out.extend(orelse)
        elif isinstance(n, Loop):
            macro = {"for": ops.loop_for, "while": ops.loop_while, "def": ops.loop_def}[n.kind]
            out.append(pad + str(macro(n.header)).strip())
            body = _lines(n.body, ops, depth + 1, source_name)
            out.extend(body or [_INDENT * (depth + 1) + "pass"])
    return out


def generate_literal(
    program: LiteralProgram,
    target: str = "nki",
    *,
    source_name: str = "kernel.cu",
    header: Iterable[str] = (),
) -> str:
    """The NKI source of a literal program (``ValueError`` for a target without a literal form)."""
    if target not in TARGETS:
        raise ValueError(f"no literal form for target {target!r}")
    ops = _ops(target)
    body = _lines(program.body, ops, 1, source_name)
    return (
        environment()
        .get_template(f"{target}/literal_module.py.j2")
        .render(
            header=list(header),
            partitions=program.partitions,
            free=program.free,
            layout=program.layout,
            name=spell.py_name(program.name),
            params=", ".join(program.params),
            body=body,
            wide=uses_limbs(body),
            data_address=comment(DATA_ADDRESS_IDS, DATA_ADDRESS),
        )
    )


def uses_limbs(body: list[str]) -> bool:
    """Whether a literal port computes with 64-bit limb pairs (then its module carries their
    helpers, ``templates/int64_common.py.j2``)."""
    return any(_LIMB_CALL.search(line) for line in body)


_LIMB_CALL = re.compile(r"_c2n_w(?!here)\w*\(")


#: why a kernel without outputs gets no port: there is nothing a port could compute or a check compare
_NO_OUTPUT = (
    "a kernel that writes no global memory (no output tensor; device printf is not ported), "
    "so a port would compute nothing"
)


def _writes(binding: object) -> bool:
    """Whether the binding has a tensor the kernel writes (role ``out`` or ``inout``)."""
    tensors = getattr(binding, "tensors", ())
    return any(getattr(t, "role", "in") in ("out", "inout") for t in tensors)


def _legacy_gap(program: LiteralProgram, target: str) -> str | None:
    """Why the legacy API cannot state ``program`` (a runtime loop), else None."""
    from cuda2nki.lift.literal.runtime_scope import runtime_loop_line
    from cuda2nki.lift.literal.unbounded import LEGACY

    line = runtime_loop_line(program.body) if target == "legacy" else None
    return None if line is None else f"{LEGACY} (line {line})"


def port_literal(
    path: str,
    tu: object,
    kernel: str,
    binding: object,
    target: str,
    why: str,
) -> tuple[str | None, list]:
    """The literal port of ``kernel`` and its diagnostics (C2N2300), or a refusal (C2N2301/2302)."""
    from pathlib import Path

    from cuda2nki.diagnostics import make
    from cuda2nki.lift.literal import LiteralRefusal, lower_literal
    from cuda2nki.lift.written import no_output_reason

    fn = tu.function(kernel)  # type: ignore[attr-defined]
    loc = fn.loc if fn is not None else None
    if target not in TARGETS:
        return None, [make("C2N2302", loc, kernel=kernel, target=target)]
    try:
        program = lower_literal(tu, kernel, binding)
    except LiteralRefusal as r:
        where = getattr(r.loc, "line", 0)
        construct = f"{r.construct} (line {where})" if where else r.construct
        return None, [make("C2N2301", r.loc or loc, kernel=kernel, construct=construct)]
    legacy_gap = _legacy_gap(program, target)
    if legacy_gap is not None:
        return None, [make("C2N2301", loc, kernel=kernel, construct=legacy_gap)]
    if not _writes(binding):
        line = getattr(loc, "line", 0)
        why_none = no_output_reason(fn, binding, _NO_OUTPUT)
        construct = f"{why_none} (line {line})" if line else why_none
        return None, [make("C2N2301", loc, kernel=kernel, construct=construct)]
    grid = " x ".join(str(g) for g in binding.grid)  # type: ignore[attr-defined]
    block = " x ".join(str(b) for b in binding.block)  # type: ignore[attr-defined]
    diag = make(
        "C2N2300",
        loc,
        kernel=kernel,
        why=why,
        layout=f"{program.partitions} x {program.free} tile, {program.layout}",
        blocks=f"grid ({grid}) blocks of ({block}) threads"
        + (f", batched {program.batched} threads per tile" if program.batched else ""),
    )
    tensors = ", ".join(
        f"{t.name}: {t.dtype}[{', '.join(map(str, t.shape))}] {t.role}"
        for t in binding.tensors  # type: ignore[attr-defined]
    )
    header = [
        f"Literal NKI port of CUDA kernel '{kernel}' from {Path(path).name}, generated by "
        f"cuda2nki ({target} API).",
        f"Binding: {tensors}",
        f"Launch: grid ({grid}) x block ({block}) -> a loop over the blocks inside the kernel.",
        f"{diag.code}: {why}: a thread-by-thread (literal) translation, correct but slow;",
        "each CUDA block is one (P, F) tile of threads, loads and stores are strided DMA views."
        if not program.batched
        else f"its threads never meet: {program.batched} consecutive threads of the grid (blocks "
        "batched) are one (P, F) tile, loads and stores are strided DMA views.",
    ]
    header += global_memory_note(fn, binding)
    src = generate_literal(program, target, source_name=Path(path).name, header=header)
    return src, [diag]
