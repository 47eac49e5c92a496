"""Wrong outputs explained by a literal: a changed constant, or eps added in the wrong place.

Both are tested by re-running the CUDA kernel (in the SIMT interpreter, on the same inputs) with
one floating-point literal of its source replaced, or the port with one of its own:

* **changed constant**: the port has a literal close to, but not equal to, one of the CUDA
  kernel's (``0.04715`` for ``0.044715``).  The CUDA kernel re-run with its literal replaced by
  the port's matches the port's output everywhere: the constant is the whole difference.
* **eps misplaced**: the port uses the CUDA kernel's small constant (``1e-5``) unchanged, and
  the wrong elements are those it dominates in the port: the port re-run (in a sandbox) with it
  ``EPS_FACTOR`` times larger moves them beyond the tolerance.  The constant then enters the port's computation
  somewhere else than in the CUDA kernel (outside a square root, added to the mean, ...): on
  ordinary rows the two agree, on the rows where eps matters they do not.  The port line is the
  one on the wrong elements' path that computes with it.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: the re-runs one explanation may cost (each parses and interprets the CUDA kernel once)
MAX_RERUNS = 6
#: the largest literal taken for an eps
EPS_MAX = 1e-2
#: how much larger eps is in the port's re-run: enough to move every element it dominates
EPS_FACTOR = 100.0

#: source text (the CUDA kernel's, or the port's) -> the output compared, from a re-run on the
#: same inputs (None: the re-run failed)
SourceRerun = Callable[[str], "np.ndarray | None"]

_C_FLOAT = re.compile(
    r"(?<![\w.])((?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)([fF]?)(?![\w.])"
)
_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


@dataclass(frozen=True)
class Literal:
    value: float
    line: int
    text: str
    stmt_line: int = 0  # the line of the statement holding it (port side)
    #: a constant expression's offsets in the CUDA text (``sqrtf(2.0f / M_PI)``); None: a literal
    span: tuple[int, int] | None = None

    def shown(self) -> str:
        """The text, with the value where it is an expression."""
        if self.span is None and re.fullmatch(r"-?[\d.eE+-]+[fF]?", self.text):
            return self.text
        return f"{self.text} = {self.value:.7g}"


@dataclass(frozen=True)
class Explanation:
    name: str  # "changed constant" | "eps misplaced"
    line: int
    evidence: str
    advice: str


# --------------------------------------------------------------------------- the literals


def _code(text: str) -> str:
    """CUDA source with its comments blanked (offsets and line numbers kept)."""
    return _C_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def cuda_literals(text: str) -> tuple[Literal, ...]:
    """The floating-point literals of CUDA source ``text`` (comments skipped)."""
    code = _code(text)
    out = []
    for m in _C_FLOAT.finditer(code):
        try:
            v = float(m.group(1))
        except ValueError:
            continue
        out.append(Literal(v, code.count("\n", 0, m.start()) + 1, m.group(0)))
    return tuple(out)


def port_literals(port_text: str) -> tuple[Literal, ...]:
    """The float constants in the port's code (docstrings and comments are not code)."""
    try:
        tree = ast.parse(port_text)
    except SyntaxError:
        return ()
    stmt_of: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef | ast.ClassDef):
            for child in ast.walk(node):
                if hasattr(child, "lineno"):
                    stmt_of.setdefault(id(child), node.lineno)
    negated = {
        id(n.operand)
        for n in ast.walk(tree)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is float:
            text = ast.get_source_segment(port_text, node) or repr(node.value)
            value, line = node.value, stmt_of.get(id(node), node.lineno)
            if id(node) in negated:
                value, text = -value, "-" + text
            out.append(Literal(value, node.lineno, text, line))
    return tuple(sorted(out, key=lambda lit: lit.line))


def cuda_constants(text: str, scalars: Mapping[str, float | int] = {}) -> tuple[Literal, ...]:
    """The CUDA kernel's literals and its constant expressions (``constexpr.py``), ``scalars``
    being the scalar parameters' values at the test point."""
    from cuda2nki.fidelity import constexpr

    exprs = tuple(
        Literal(e.value, e.line, e.text, span=e.span)
        for e in constexpr.cuda_constant_exprs(text, scalars)
    )
    return cuda_literals(text) + exprs


def port_constants(port_text: str) -> tuple[Literal, ...]:
    """The port's float literals and its constant expressions (``math.sqrt(2.0 / math.pi)``)."""
    from cuda2nki.fidelity import constexpr

    exprs = tuple(
        Literal(v, line, text, stmt)
        for v, line, text, stmt in constexpr.port_constant_exprs(port_text)
    )
    return tuple(sorted(port_literals(port_text) + exprs, key=lambda lit: lit.line))


def rewritten(text: str, lit: Literal, new: float) -> str:
    """CUDA source ``text`` with the constant ``lit`` written as ``new``: the expression's span,
    or every literal of its value."""
    if lit.span is None:
        return replaced(text, lit.value, new)
    a, b = lit.span
    single = re.search(r"\d[fF]\b|[A-Za-z_]\w*f\s*\(", lit.text) is not None
    return f"{text[:a]}({new!r}{'f' if single else ''}){text[b:]}"


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b))


def swaps(cuda: Sequence[Literal], port: Sequence[Literal]) -> list[tuple[Literal, Literal]]:
    """(CUDA literal, port literal) pairs that may be one constant changed: values on no other
    side, of the same sign and within a factor of 4, closest first."""
    only_c = _distinct(
        [c for c in cuda if c.value and not any(_same(c.value, p.value) for p in port)]
    )
    only_p = _distinct(
        [p for p in port if p.value and not any(_same(p.value, c.value) for c in cuda)]
    )
    pairs = [
        (c, p)
        for c in only_c
        for p in only_p
        if c.value * p.value > 0 and 0.25 <= p.value / c.value <= 4.0
    ]
    pairs.sort(key=lambda cp: abs(math.log(cp[1].value / cp[0].value)))
    return pairs[:MAX_RERUNS]


def _distinct(lits: Sequence[Literal]) -> list[Literal]:
    out: list[Literal] = []
    for lit in lits:
        if not any(_same(lit.value, o.value) for o in out):
            out.append(lit)
    return out


def replaced(text: str, value: float, new: float) -> str:
    """CUDA source ``text`` with every literal of ``value`` written as ``new`` (comments kept)."""
    code = _code(text)
    pieces, last = [], 0
    for m in _C_FLOAT.finditer(code):
        try:
            v = float(m.group(1))
        except ValueError:
            continue
        if _same(v, value):
            pieces += [text[last : m.start()], f"{new!r}{m.group(2)}"]
            last = m.end()
    pieces.append(text[last:])
    return "".join(pieces)


# --------------------------------------------------------------------------- the explanations


def changed_constant(
    got: np.ndarray,
    bound: np.ndarray,
    cuda_text: str,
    port_text: str,
    rerun: SourceRerun,
    scalars: Mapping[str, float | int] = {},
) -> Explanation | None:
    """The port's output is the CUDA kernel's with one constant (a literal, or an expression
    such as ``sqrtf(2.0f / M_PI)``) replaced by the port's."""
    from cuda2nki.fidelity.compare import within

    g = np.asarray(got, dtype=np.float64)
    for c, p in swaps(cuda_constants(cuda_text, scalars), port_constants(port_text)):
        alt = rerun(rewritten(cuda_text, c, p.value))
        if alt is None or np.size(alt) != g.size:
            continue
        a = np.asarray(alt, dtype=np.float64).reshape(g.shape)
        if within(g, a, np.broadcast_to(bound, g.shape)).all():
            return Explanation(
                "changed constant",
                p.line,
                f"the port's constant {p.shown()} (port line {p.line}) stands where the CUDA "
                f"kernel has {c.shown()} (CUDA line {c.line}): the CUDA kernel re-run with "
                f"{c.text} replaced by {p.value:.7g} matches the port's output everywhere, so "
                "the changed constant is the whole difference",
                f"use the CUDA kernel's value {_value_text(c)} at port line {p.line}",
            )
    return None


def _value_text(c: Literal) -> str:
    if c.span is None:
        return c.text.rstrip("fF")
    return f"{c.value:.10g} ({c.text})"


@dataclass(frozen=True)
class Eps:
    """A small constant both sides use: a literal of both sources, or a CUDA scalar parameter
    bound to a port parameter."""

    text: str  # as the CUDA kernel writes it (``1e-5f``, ``eps``)
    cuda_line: int
    value: float
    port_lines: frozenset[int] = frozenset()  # the port statements holding the literal
    port_param: str = ""  # or the port parameter it is passed as


def eps_candidates(
    cuda_text: str, port_text: str, scalars: Mapping[str, tuple[str, float]] = {}
) -> list[Eps]:
    """The eps-like constants (0 < |value| <= ``EPS_MAX``) the CUDA kernel and the port share:
    literals of equal value, and CUDA scalars (name -> (port parameter, value))."""
    port = port_literals(port_text)
    out = []
    for c in _distinct(cuda_literals(cuda_text)):
        mine = frozenset(p.stmt_line or p.line for p in port if _same(p.value, c.value))
        if 0 < abs(c.value) <= EPS_MAX and mine:
            out.append(Eps(c.text, c.line, c.value, port_lines=mine))
    lines = _code(cuda_text).splitlines()
    for name, (param, value) in scalars.items():
        if 0 < abs(value) <= EPS_MAX:
            use = re.compile(rf"\b{re.escape(name)}\b")
            at = [i for i, ln in enumerate(lines, 1) if use.search(ln)]
            body = [i for i in at if not re.search(r"\b(void|__global__)\b", lines[i - 1])]
            out.append(Eps(name, (body or at or [0])[0], value, port_param=param))
    return out[:MAX_RERUNS]


def eps_misplaced(
    got: np.ndarray,
    bad: np.ndarray,
    bound: np.ndarray,
    cuda_text: str,
    port_text: str,
    chain: Sequence[tuple[int, str]],
    candidates: Sequence[Eps],
    rerun_port: Callable[[Eps, float], np.ndarray | None],
    rerun_cuda: Callable[[Eps, float], np.ndarray | None] | None = None,
    expected: np.ndarray | None = None,
) -> Explanation | None:
    """The port uses the CUDA kernel's eps unchanged, and its wrong elements are the ones eps
    dominates: re-run with eps ``EPS_FACTOR`` times larger, the port (or else the CUDA kernel,
    compared with its own ``expected`` output) moves (nearly) all of them beyond the tolerance,
    and not every element.  The port's eps then enters elsewhere than the CUDA kernel's (or
    enters changed: squared, under another root)."""
    g = np.asarray(got, dtype=np.float64)
    nbad = int(bad.sum())
    for c in candidates if nbad else ():
        covered, side = _eps_covers(g, bad, bound, rerun_port(c, c.value * EPS_FACTOR))
        if covered * 10 < nbad * 9 and rerun_cuda is not None and expected is not None:
            x = np.asarray(expected, dtype=np.float64).reshape(g.shape)
            covered, side = _eps_covers(x, bad, bound, rerun_cuda(c, c.value * EPS_FACTOR))
            side = "the CUDA kernel" if side else ""
        if covered * 10 < nbad * 9 or not side:
            continue
        line = _eps_use(port_text, c, chain)
        lines = cuda_text.splitlines()
        src = lines[c.cuda_line - 1].strip() if 0 < c.cuda_line <= len(lines) else ""
        return Explanation(
            "eps misplaced",
            line,
            f"the port uses the CUDA kernel's eps ({c.text}, CUDA line {c.cuda_line}: `{src}`), "
            f"and {covered} of the {nbad} wrong elements are ones eps dominates in {side} "
            f"(re-run with eps {EPS_FACTOR:g} times larger, it moves them beyond the "
            f"tolerance): the rows where eps matters, and the port adds it at port line {line}, "
            "not where (or not as) the CUDA kernel does",
            f"add eps where the CUDA kernel does (CUDA line {c.cuda_line}; for a normalisation, "
            f"to the variance under the square root) instead of at port line {line}",
        )
    return None


def _eps_covers(
    base: np.ndarray,
    bad: np.ndarray,
    bound: np.ndarray,
    alt: np.ndarray | None,
) -> tuple[int, str]:
    """(how many wrong elements a re-run with a larger eps moves away from ``base``, "the port"),
    or (0, "") when the re-run fails, or moves the right elements as much as the wrong ones
    (eps is then no discriminator)."""
    from cuda2nki.fidelity.compare import within

    if alt is None or np.size(alt) != base.size:
        return 0, ""
    q = np.asarray(alt, dtype=np.float64).reshape(base.shape)
    b = np.broadcast_to(bound, base.shape)
    moved = ~within(q, base, b)
    if moved.all() and (~bad).any():
        shift = np.abs(q - base) / np.maximum(b, np.finfo(np.float64).tiny)
        if not np.median(shift[bad]) > 2 * np.median(shift[~bad]):
            return 0, ""
    return int((moved & bad).sum()), "the port"


def port_replaced(port_text: str, value: float, new: float) -> str:
    """The port's text with every float constant equal to ``value`` written as ``new``."""
    try:
        tree = ast.parse(port_text)
    except SyntaxError:
        return port_text
    spots = sorted(
        (
            (n.lineno, n.col_offset, n.end_col_offset or n.col_offset)
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and type(n.value) is float and _same(n.value, value)
        ),
        reverse=True,
    )
    lines = port_text.splitlines(keepends=True)
    for ln, a, b in spots:
        raw = lines[ln - 1].encode()
        lines[ln - 1] = (raw[:a] + repr(new).encode() + raw[b:]).decode()
    return "".join(lines)


def _eps_use(port_text: str, eps: Eps, chain: Sequence[tuple[int, str]]) -> int:
    """The nearest line on the wrong stores' path that computes with eps (directly or through
    the names and tiles that only hold it); else the first line that does; else the literal's."""
    names = {eps.port_param} if eps.port_param else set()
    uses = _consumers(port_text, set(eps.port_lines), names)
    for ln, _op in chain:
        if ln in uses:
            return ln
    return min(uses, default=min(eps.port_lines, default=0))


def _consumers(port_text: str, seed_lines: set[int], seed_names: set[str]) -> set[int]:
    """Statement lines that compute with the value written at ``seed_lines`` (or passed in
    ``seed_names``): it is followed through statements that only hold it (``eps = 1e-5``,
    ``memset(dst=t, value=eps)``)."""
    try:
        tree = ast.parse(port_text)
    except SyntaxError:
        return set(seed_lines)
    stmts = [s for s in ast.walk(tree) if isinstance(s, ast.Assign | ast.AnnAssign | ast.Expr)]
    held: set[str] = set(seed_names)
    for s in stmts:
        if s.lineno in seed_lines and _holds(s, held | {"?"}):
            held |= _written(s)
    for _ in range(4):
        more = {n for s in stmts if _reads(s) & held and _holds(s, held) for n in _written(s)}
        if more <= held:
            break
        held |= more
    out = set()
    for s in stmts:
        if (s.lineno in seed_lines or _reads(s) & held) and not _holds(s, held):
            out.add(s.lineno)
    return out


def _reads(s: ast.stmt) -> set[str]:
    node: ast.AST | None = s.value if isinstance(s, ast.Assign | ast.AnnAssign | ast.Expr) else s
    if isinstance(node, ast.Call):
        parts: list[ast.AST] = [*node.args, *(k.value for k in node.keywords if k.arg != "dst")]
    else:
        parts = [node] if node is not None else []
    return {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)}


#: calls that keep a held value what it is
_CONVERSIONS = frozenset({"float", "int"})


def _holds(s: ast.stmt, held: set[str]) -> bool:
    """``s`` only copies a held value (or a constant) into its targets."""
    if isinstance(s, ast.Assign | ast.AnnAssign) and s.value is not None:
        names = {n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)}
        calls = [n for n in ast.walk(s.value) if isinstance(n, ast.Call)]
        conv = all(isinstance(c.func, ast.Name) and c.func.id in _CONVERSIONS for c in calls)
        return conv and names - _CONVERSIONS <= held
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        kws = {k.arg for k in s.value.keywords}
        return "value" in kws and not s.value.args and kws <= {"dst", "value", "engine"}
    return False


def _written(s: ast.stmt) -> set[str]:
    targets: list[ast.AST] = []
    if isinstance(s, ast.Assign):
        targets = list(s.targets)
    elif isinstance(s, ast.AnnAssign):
        targets = [s.target]
    elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        targets = [k.value for k in s.value.keywords if k.arg == "dst"]
    out = set()
    for t in targets:
        while isinstance(t, ast.Subscript | ast.Attribute):
            t = t.value
        out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


__all__ = [
    "Eps",
    "Explanation",
    "Literal",
    "MAX_RERUNS",
    "changed_constant",
    "cuda_constants",
    "cuda_literals",
    "eps_candidates",
    "eps_misplaced",
    "port_constants",
    "port_literals",
    "replaced",
    "rewritten",
    "swaps",
]
