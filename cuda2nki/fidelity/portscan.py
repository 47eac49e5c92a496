"""Static reading of a port's Python source: which function is the kernel, its parameters and
outputs, which API generation it uses, inline suppressions, and findings visible in the text.

Nothing here executes the port (``--static-only`` relies on that).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, SourceLoc, make

NARROW = (
    "bfloat16",
    "float16",
    "float8_e4m3",
    "float8_e5m2",
    "float8_e4m3fn",
    "tfloat32",
    "fp8",
    "bf16",
)
_IGNORE = re.compile(r"#\s*cuda2nki:\s*ignore(-file)?\[([A-Z0-9, *]+)\][ \t]*([^#\n]*)")
#: numerics findings (the port computes something else): no inline comment hides them
NUMERICS = re.compile(r"C2N4\d{3}")
_ALLOC = {
    "ndarray",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
}


@dataclass(frozen=True)
class PortInfo:
    path: str
    kernel: str
    line: int
    params: tuple[str, ...]
    keyword_params: tuple[str, ...]  # parameters with defaults (scalars by name)
    returns: tuple[str | None, ...]  # names returned, in order (None: not a plain name)
    api: str  # "current" | "legacy"
    suppressions: dict[int, frozenset[str]] = field(default_factory=dict)
    file_suppressions: frozenset[str] = frozenset()
    reasons: dict[int, str] = field(default_factory=dict)  # line -> the comment's reason

    def suppressed(self, d: Diagnostic) -> bool:
        return self.suppressed_by(d) is not None

    def suppressed_by(self, d: Diagnostic) -> int | None:
        """The line of the comment that suppresses ``d`` (0: a file-wide one), or None.  A
        numerics finding (C2N4xxx) is never suppressed inline."""
        if NUMERICS.fullmatch(d.code):
            return None
        if d.code in self.file_suppressions or "*" in self.file_suppressions:
            return 0
        if d.loc.file not in (self.path, "<port>") and not d.loc.file.endswith(
            self.path.rsplit("/", 1)[-1]
        ):
            return None
        for ln in (d.loc.line, d.loc.line - 1):
            ids = self.suppressions.get(ln, frozenset())
            if d.code in ids or "*" in ids:
                return ln
        return None

    def why(self, d: Diagnostic) -> str:
        """``ID at line N: reason`` for a finding an inline comment suppresses."""
        ln = self.suppressed_by(d)
        if ln is None:
            return ""
        where = "file-wide" if ln == 0 else f"line {ln}"
        reason = self.reasons.get(ln, "") or "no reason given"
        return f"{d.code} suppressed {where} ({d.loc.file}:{d.loc.line}): {reason}"


def _fail(path: str, line: int, reason: str) -> DiagnosticError:
    return DiagnosticError(make("C2N4020", SourceLoc(path, line, 1), reason=reason))


def parse_port(path: str, source: str) -> ast.Module:
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise DiagnosticError(
            make(
                "C2N4020",
                SourceLoc(path, exc.lineno or 1, exc.offset or 1),
                reason=f"the port is not valid Python: {exc.msg}",
            )
        ) from None


def _is_jit(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(target, ast.Attribute):
        return target.attr in ("jit", "trace", "baremetal")
    return isinstance(target, ast.Name) and target.id in ("jit", "nki_jit")


def find_kernel(
    tree: ast.Module, path: str, name: str | None, cuda_name: str | None = None
) -> ast.FunctionDef:
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if name:
        for f in funcs:
            if f.name == name:
                return f
        raise _fail(
            path,
            1,
            f"no function '{name}' in the port; functions: {', '.join(f.name for f in funcs) or 'none'}",
        )
    jitted = [f for f in funcs if any(_is_jit(d) for d in f.decorator_list)]
    if len(jitted) == 1:
        return jitted[0]
    pool = jitted or funcs
    if cuda_name:
        for f in pool:
            if f.name == cuda_name:
                return f
    if len(pool) == 1:
        return pool[0]
    raise _fail(
        path,
        1,
        f"cannot tell which function is the kernel ({', '.join(f.name for f in pool) or 'none found'}); "
        "use --port-kernel NAME",
    )


def _api(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("neuronxcc"):
            return "legacy"
        if isinstance(node, ast.Import) and any(a.name.startswith("neuronxcc") for a in node.names):
            return "legacy"
    return "current"


def _returns(fn: ast.FunctionDef) -> tuple[str | None, ...]:
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            vals = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            return tuple(v.id if isinstance(v, ast.Name) else None for v in vals)
    return ()


def _suppressions(
    source: str,
) -> tuple[dict[int, frozenset[str]], frozenset[str], dict[int, str]]:
    per_line: dict[int, frozenset[str]] = {}
    whole: set[str] = set()
    reasons: dict[int, str] = {}
    for i, text in enumerate(source.splitlines(), start=1):
        for m in _IGNORE.finditer(text):
            ids = frozenset(x.strip() for x in m.group(2).split(",") if x.strip())
            if m.group(3).strip():
                reasons[0 if m.group(1) else i] = m.group(3).strip()
            if m.group(1):
                whole |= ids
            else:
                per_line[i] = per_line.get(i, frozenset()) | ids
    return per_line, frozenset(whole), reasons


def scan(
    path: str, source: str, name: str | None = None, cuda_name: str | None = None
) -> tuple[PortInfo, ast.Module]:
    tree = parse_port(path, source)
    fn = find_kernel(tree, path, name, cuda_name)
    args = fn.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    n_def = len(args.defaults)
    plain = positional[: len(positional) - n_def] if n_def else positional
    keyword = positional[len(positional) - n_def :] if n_def else []
    keyword += [a.arg for a in args.kwonlyargs]
    per_line, whole, reasons = _suppressions(source)
    info = PortInfo(
        path,
        fn.name,
        fn.lineno,
        tuple(plain),
        tuple(keyword),
        _returns(fn),
        _api(tree),
        per_line,
        whole,
        reasons,
    )
    return info, tree


# --------------------------------------------------------------------------- static findings


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _text(node: ast.AST | None) -> str:
    return ast.unparse(node) if node is not None else ""


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _mentions_narrow(node: ast.AST | None) -> str:
    t = _text(node)
    return next((n for n in NARROW if n in t), "")


#: modules that no kernel needs and that let code inspect or patch its own review
ESCAPE_MODULES = frozenset(
    {"cuda2nki", "ctypes", "gc", "_ctypes", "cffi", "importlib", "marshal", "pickle", "mmap"}
)
#: attributes that reach other frames, objects or the simulator's internals
ESCAPE_ATTRS = frozenset(
    {
        "_getframe",
        "f_back",
        "f_globals",
        "f_locals",
        "tb_frame",
        "gi_frame",
        "cr_frame",
        "__subclasses__",
        "__globals__",
        "__builtins__",
        "get_objects",
        "get_referrers",
        "storage",
    }
)


def escape_hatches(tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """Places where a port reaches outside the NKI programming model (C2N4025): imports of
    introspection or native-code modules, or of cuda2nki itself, and frame, object-graph or
    simulator-internal attributes.  (The sandbox, not this scan, is the security boundary: this
    names the attempt on the right line.)"""
    out: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for n in names:
            if n.split(".")[0] in ESCAPE_MODULES:
                out.append((node, f"imports {n}"))
        if isinstance(node, ast.Attribute) and node.attr in ESCAPE_ATTRS:
            out.append((node, f"reads .{node.attr}"))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("__import__", "exec", "eval", "compile")
        ):
            out.append((node, f"calls {node.func.id}()"))
    return out


def static_findings(
    info: PortInfo,
    tree: ast.Module,
    *,
    cuda_dtypes: set[str] | frozenset[str] = frozenset(),
    cuda_guarded: bool = True,
) -> list[Diagnostic]:
    """Findings visible in the text alone.

    ``cuda_dtypes``: the dtypes of the CUDA kernel's tensors (narrowing is judged against them);
    ``cuda_guarded``: whether the CUDA kernel handles sizes that are not multiples of its block.
    """
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == info.kernel)
    out: list[Diagnostic] = []

    def loc(node: ast.AST) -> SourceLoc:
        return SourceLoc(
            info.path, getattr(node, "lineno", info.line), getattr(node, "col_offset", 0) + 1
        )

    out.extend(make("C2N4025", loc(node), what=what) for node, what in escape_hatches(tree))
    cuda_narrow = any(d in cuda_dtypes for d in ("bfloat16", "float16"))
    src = ast.unparse(fn)
    handles_tail = bool(
        re.search(r"\bmin\(|mask\s*=|%|ceil|\+\s*\w+\s*-\s*1\)\s*//|-\s*1\s*\)\s*//|-\(-", src)
    )
    accumulators = _accumulators(fn)
    targets = {
        id(n.value): n.targets[0].id
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    }
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in _ALLOC:
                buf = _text(_kw(node, "buffer"))
                narrow = _mentions_narrow(_kw(node, "dtype")) or (
                    _mentions_narrow(node.args[1]) if len(node.args) > 1 else ""
                )
                acc_name = targets.get(id(node))
                if narrow and not cuda_narrow and ("psum" in buf or acc_name in accumulators):
                    where = "PSUM accumulator" if "psum" in buf else f"accumulator '{acc_name}'"
                    out.append(
                        make(
                            "C2N5004",
                            loc(node),
                            evidence=f"{where} allocated as {narrow} "
                            f"(`{_text(node)[:80]}`); the CUDA kernel accumulates in fp32",
                        )
                    )
                elif narrow and not cuda_narrow and cuda_dtypes:
                    out.append(
                        make(
                            "C2N5005",
                            loc(node),
                            evidence=f"{'HBM tensor' if 'hbm' in buf else 'tile'} allocated as {narrow} "
                            f"(`{_text(node)[:80]}`) while the CUDA kernel computes in "
                            f"{'/'.join(sorted(cuda_dtypes))}",
                        )
                    )
            elif name in (
                "sum",
                "reduce",
                "tensor_reduce",
                "matmul",
                "copy",
                "tensor_copy",
                "static_cast",
            ):
                narrow = _mentions_narrow(_kw(node, "dtype"))
                if narrow and not cuda_narrow and cuda_dtypes:
                    rid = (
                        "C2N5004"
                        if name in ("sum", "reduce", "tensor_reduce", "matmul")
                        else "C2N5005"
                    )
                    out.append(
                        make(
                            rid,
                            loc(node),
                            evidence=f"`{name}` computes in {narrow} "
                            f"(`{_text(node)[:80]}`) while the CUDA kernel uses {'/'.join(sorted(cuda_dtypes))}",
                        )
                    )
        elif isinstance(node, ast.For):
            tail = _full_tile_loop(node)
            if tail and cuda_guarded and not handles_tail:
                out.append(make("C2N5003", loc(node), line=node.lineno, what=tail[0], tile=tail[1]))
    out.extend(_element_loops(fn, info, loc))
    return out


def _full_tile_loop(node: ast.For) -> tuple[str, str] | None:
    it = node.iter
    if not (
        isinstance(it, ast.Call)
        and it.args
        and _call_name(it) in ("range", "affine_range", "sequential_range", "static_range")
    ):
        return None
    stop = it.args[0] if len(it.args) == 1 else it.args[1]
    if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.FloorDiv):
        tile = _text(stop.right)
        if re.fullmatch(
            r"\d+|.*pmax|.*psum_fmax|.*gemm_moving_fmax|.*gemm_stationary_fmax|[A-Z_]+", tile
        ):
            return _text(stop.left), tile
    return None


def _element_loops(fn: ast.FunctionDef, info: PortInfo, loc: Any) -> list[Diagnostic]:
    """A loop whose body addresses single elements with its loop variable (``i:i+1``, ``nl.ds(i, 1)``)."""
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name):
            continue
        v = loop.target.id
        single = re.compile(rf"\b{v}\s*:\s*{v}\s*\+\s*1\b|nl\.ds\(\s*{v}\s*,\s*1\s*\)")
        if any(single.search(ast.unparse(x)) for x in _addressed(loop.body)):
            return [
                make(
                    "C2N5010",
                    loc(loop),
                    evidence=f"the loop over '{v}' at line {loop.lineno} addresses "
                    "one element per iteration",
                )
            ]
    return []


#: keywords whose operand is one value per partition applied to a whole tile (a filter tap's
#: column ``w[:, j:j+1]`` is not per-element work)
_SCALAR_OPERANDS = frozenset({"operand0", "operand1", "scale", "bias"})


def _addressed(body: list[ast.stmt]) -> list[ast.AST]:
    """The parts of ``body`` that address data: everything but the per-partition scalar
    operands of its calls."""
    out: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            for x in (node.func, *node.args):
                visit(x)
            for k in node.keywords:
                if k.arg not in _SCALAR_OPERANDS:
                    visit(k.value)
        elif any(isinstance(c, ast.Call) for c in ast.walk(node)):
            for c in ast.iter_child_nodes(node):
                visit(c)
        else:
            out.append(node)

    for st in body:
        visit(st)
    return out


def _root(node: ast.AST | None) -> str | None:
    """The variable a (possibly subscripted) operand names: ``acc[0:m, 0:n]`` -> ``acc``."""
    while isinstance(node, ast.Subscript | ast.Attribute | ast.Starred):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _accumulators(fn: ast.FunctionDef) -> set[str]:
    """Names updated from themselves: ``x += ...``, ``x = op(x, ...)``, ``op(dst=x[..], data1=x[..])``."""
    acc: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.AugAssign) and _root(node.target):
            acc.add(_root(node.target))  # type: ignore[arg-type]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and _root(node.targets[0]):
            name = _root(node.targets[0])
            operands = (
                list(node.value.args)
                if isinstance(node.value, ast.Call)
                else [node.value.left, node.value.right]
                if isinstance(node.value, ast.BinOp)
                else []
            )
            if any(_root(o) == name for o in operands):
                acc.add(name)  # type: ignore[arg-type]
        elif isinstance(node, ast.Call):
            dst = _kw(node, "dst") or (node.args[0] if node.args else None)
            name = _root(dst)
            if name:
                others = [k.value for k in node.keywords if k.arg != "dst"] + list(node.args[1:])
                if any(_root(o) == name for o in others):
                    acc.add(name)
    return acc
