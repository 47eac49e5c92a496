"""What a runtime loop's body may share with the code around it (a check of a literal program).

The body of a runtime loop (:mod:`.dataloop`) is a Python function that NKI traces once and
runs on the device, so the simulator's way of running it -- the function called once per
iteration -- is faithful only when

* every name the body assigns is assigned in it before it is read (what crosses iterations is
  the carried tiles, which the body rebinds from their slots first): a read of a name that the
  body assigns later would be a trace-time value of the previous iteration;
* the body mutates nothing of the enclosing code (``arr[k] = ...`` of a list of tiles made
  outside it);
* the code after the loop reads no name the body assigned unless it assigned it again first
  (the carried tiles are rebound from their slots): the enclosing function would see its own,
  older value.

A program that breaks one of these is refused rather than ported wrong.
"""

from __future__ import annotations

import ast as pyast
from collections.abc import Iterable

from cuda2nki.lift.literal.dataloop import BODY_PREFIX
from cuda2nki.lift.literal.program import Branch, Instr, LiteralProgram, Loop, Node
from cuda2nki.lift.literal.reuse import _names
from cuda2nki.lift.literal.state import LiteralRefusal

#: operands that are not Python expressions read by the instruction
_NOT_READ = ("dst", "text")


class _Broken(Exception):
    def __init__(self, why: str, line: int) -> None:
        super().__init__(why)
        self.why, self.line = why, line


def check_runtime_loops(program: LiteralProgram) -> LiteralProgram:
    """``program``, after checking its runtime loops (raises :class:`LiteralRefusal`)."""
    try:
        _scan(program.body, set(), None)
    except _Broken as exc:
        raise LiteralRefusal(
            f"a loop whose trip count depends on data whose body {exc.why} (line {exc.line})",
            None,
        ) from None
    return program


def runtime_loop_line(nodes: Iterable[Node]) -> int | None:
    """The source line of the first runtime loop among ``nodes`` (at any depth), else None."""
    for n in nodes:
        if isinstance(n, Loop) and _is_body(n):
            return n.line
        inner = (*n.then, *n.else_) if isinstance(n, Branch) else getattr(n, "body", ())
        line = runtime_loop_line(inner)
        if line is not None:
            return line
    return None


def _is_body(n: Node) -> bool:
    return isinstance(n, Loop) and n.kind == "def" and n.header.startswith(BODY_PREFIX)


def _targets(dst: str) -> tuple[set[str], set[str], set[str]]:
    """(names rebound, names mutated, names read) by assigning to ``dst``."""
    try:
        node = pyast.parse(dst.strip(), mode="eval").body
    except SyntaxError:
        return set(), set(), set()
    elts = node.elts if isinstance(node, pyast.Tuple) else [node]
    bound: set[str] = set()
    mutated: set[str] = set()
    read: set[str] = set()
    for e in elts:
        if isinstance(e, pyast.Name):
            bound.add(e.id)
            continue
        read |= {x.id for x in pyast.walk(e) if isinstance(x, pyast.Name)}
        while isinstance(e, pyast.Subscript | pyast.Attribute):
            e = e.value
        if isinstance(e, pyast.Name):
            mutated.add(e.id)
    return bound, mutated, read


def _assigned(nodes: Iterable[Node]) -> set[str]:
    """Every name the nodes bind (instruction targets and loop variables), at any depth."""
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, Instr):
            if "dst" in dict(n.operands) and n.kind != "fill":
                out |= _targets(n.get("dst"))[0]
        elif isinstance(n, Branch):
            out |= _assigned(n.then) | _assigned(n.else_)
        else:
            out |= _header_binds(n) | _assigned(n.body)
    return out


def _header_binds(loop: Loop) -> set[str]:
    if loop.kind == "for":
        return _targets(loop.header.split(" in ", 1)[0])[0]
    if loop.kind == "def":
        inside = loop.header[loop.header.find("(") + 1 : loop.header.rfind(")")]
        return {p.split("=")[0].strip() for p in inside.split(",") if p.strip()}
    return set()


def _header_reads(loop: Loop) -> frozenset[str]:
    if loop.kind == "for":
        return _names(loop.header.split(" in ", 1)[1])
    if loop.kind == "while":
        return _names(loop.header)
    return frozenset()


def _scan(nodes: Iterable[Node], stale: set[str], local: set[str] | None) -> set[str]:
    """Check ``nodes``; ``stale``: the names whose reads here would be wrong (see the module),
    ``local``: the names a runtime loop's body being scanned binds (None outside one).  Returns
    the names stale after the nodes."""
    stale = set(stale)
    for n in nodes:
        if isinstance(n, Instr):
            ops = dict(n.operands)
            reads = set().union(*(_names(v) for k, v in ops.items() if k not in _NOT_READ))
            bound: set[str] = set()
            if "dst" in ops and n.kind != "fill":
                bound, mutated, dst_reads = _targets(ops["dst"])
                reads |= dst_reads | mutated
                if local is not None and mutated - local:
                    raise _Broken(f"changes '{sorted(mutated - local)[0]}' of the code around "
                                  "it", n.line)  # fmt: skip
            _check(reads, stale, n.line)
            stale -= bound
        elif isinstance(n, Branch):
            _check(_names(n.cond), stale, n.line)
            stale = _scan(n.then, stale, local) | _scan(n.else_, stale, local)
        elif _is_body(n):
            inner = _assigned(n.body)
            _scan(n.body, stale | (inner - _header_binds(n)), inner)
            stale |= inner
        elif n.kind == "def":  # another function: names of its own
            _scan(n.body, set(), None)
        else:
            _check(_header_reads(n), stale, n.line)
            after = _scan(n.body, stale - _header_binds(n), local)
            stale |= after
    return stale


def _check(reads: Iterable[str], stale: set[str], line: int) -> None:
    bad = sorted(set(reads) & stale)
    if bad:
        raise _Broken(f"shares the trace-time value '{bad[0]}' with another iteration or the code "
                      "after the loop", line)  # fmt: skip
