"""Kernel bindings: what each CUDA pointer parameter *is* (shape, dtype, role) and how it is launched.

CUDA kernels take flat pointers; NKI kernels take shaped tensors.  A binding bridges the two.  The
sidecar format (``kernel.toml`` beside ``kernel.cu``)::

    kernel = "softmax_forward"            # optional when the file has one __global__
    [launch]
    grid = ["ceil_div(N, 256)"]           # 1-3 expressions over scalar params
    block = [256]
    shared_bytes = "256 * 4"              # optional dynamic shared memory
    [params]                               # every kernel parameter, in kernel order
    out = { shape = ["N", "C"], dtype = "float32", role = "out" }   # role: in | out | inout
    inp = { shape = ["N", "C"], dtype = "float32", role = "in" }
    idx = { shape = ["N"], dtype = "int32", role = "in", range = [0, "V"] }  # values in [lo, hi)
    N = 1024                               # scalar parameters: default values
    C = 768
    [[check.shapes]]                       # further test points (scalar overrides)
    N = 129
    C = 513
    [check.multiples]                      # sizes the host only ever uses in steps of B
    N = 16                                 # (check's generated points keep N a multiple of 16)

One sidecar may bind several kernels of a file: each ``[kernels.NAME]`` table holds the keys above
(``launch``, ``params``, ``check``...) for the kernel NAME (quote a template instance:
``[kernels."reduce<256>"]``)::

    [kernels.scale.launch]
    grid = ["ceil_div(n, 128)"]
    block = [128]
    [kernels.scale.params]
    y = { shape = ["n"], dtype = "float32", role = "out" }
    n = 1000

A binding applies only to the kernel it names (:meth:`BindingFile.for_kernel`); one without
``kernel =`` applies to the file's kernel when the file defines one.

Optional keys: ``description``, ``idiom`` (label of the idiom the kernel implements), ``expect``
(``"refuse"`` for kernels that must be refused) with ``expect_id``, ``[check] rtol / atol``; per
tensor ``range = [lo, hi]`` (integers drawn from ``[lo, hi)``; floats uniform in it) and
``distribution`` (``normal`` | ``uniform`` | ``positive``).  A scalar may be written as a table
``{ value = 0.5, dtype = "float32" }`` to pin its C type, and a size the kernel only runs
correctly when it equals another (a naive GEMM striding its second matrix by ``K`` while its
columns run to ``M``) as ``M = { tie = "K" }``: at every point it takes that expression's value.

Expressions use C integer arithmetic (NKI.md §14.6): ``/`` truncates toward zero, ``%`` takes the
sign of the dividend; ``ceil_div(a, b)``, ``min``, ``max`` are provided.  Arrays of bf16/fp8 travel
on disk as float32 and are rounded (round-to-nearest-even) to the declared dtype on the way in
(NKI.md §14.8).
"""

from __future__ import annotations

import ast
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from cuda2nki.diagnostics import Diagnostic, DiagnosticError, SourceLoc, make
from cuda2nki.dtypes import FP8_DTYPES, STANDARD_DTYPES
from cuda2nki.fileio import read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Role = Literal["in", "out", "inout"]
Number = int | float

_DTYPES = STANDARD_DTYPES | FP8_DTYPES
_ALIASES = {
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "int": "int32",
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp32": "float32",
}

#: dtypes that ``.npz`` files cannot carry faithfully: stored as float32 on disk
NPZ_WIDENED = frozenset({"bfloat16", "float8_e4m3", "float8_e4m3fn", "float8_e5m2"})


def dtype_of(name: str) -> np.dtype:
    """NumPy dtype for a binding dtype name (``float32``, ``bfloat16``, ...)."""
    key = _ALIASES.get(name, name)
    if key not in _DTYPES:
        raise KeyError(name)
    return _DTYPES[key]


def dtype_name(dt: np.dtype) -> str:
    name = _DTYPES.name_of(dt)
    return str(dt) if name is None else name


# --------------------------------------------------------------------------- C expressions


class ExprError(ValueError):
    pass


def _c_div(a: Number, b: Number) -> Number:
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ExprError("division by zero")
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _c_mod(a: Number, b: Number) -> Number:
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ExprError("modulo by zero")
        return a - _c_div(a, b) * b
    return math.fmod(a, b)


def _ceil_div(a: Number, b: Number) -> int:
    a, b = int(a), int(b)
    if b == 0:
        raise ExprError("ceil_div by zero")
    return -((-a) // b)


_FUNCS = {"ceil_div": _ceil_div, "min": min, "max": max, "int": int, "float": float}
_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: _c_div,
    ast.FloorDiv: _c_div,
    ast.Mod: _c_mod,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
}


def eval_c_expr(text: str | Number, env: Mapping[str, Number]) -> Number:
    """Evaluate a binding expression with C integer semantics over ``env``."""
    if isinstance(text, bool):
        raise ExprError("booleans are not sizes")
    if isinstance(text, int | float):
        return text
    try:
        tree = ast.parse(str(text).strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"cannot parse expression {text!r}: {exc.msg}") from None
    return _eval(tree.body, env, str(text))


def _eval(node: ast.AST, env: Mapping[str, Number], text: str) -> Number:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ExprError(f"unknown name '{node.id}' in {text!r}")
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _eval(node.operand, env, text)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, env, text), _eval(node.right, env, text))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
    ):
        return _FUNCS[node.func.id](*(_eval(a, env, text) for a in node.args))
    raise ExprError(f"unsupported construct in expression {text!r}")


# --------------------------------------------------------------------------- data model


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[str | int, ...]
    dtype: str
    role: Role
    range: tuple[str | Number, str | Number] | None = None
    distribution: str | None = None
    #: elements from the buffer's start to the pointer the kernel is given (``d_in + RADIUS``):
    #: ``shape`` is the buffer's, and the kernel may index below 0 down to ``-offset``
    offset: int = 0

    @property
    def np_dtype(self) -> np.dtype:
        return dtype_of(self.dtype)


@dataclass(frozen=True)
class ScalarSpec:
    name: str
    value: Number
    dtype: str | None = None  # None: inferred from the value / the kernel signature
    #: a size tied to others (``M = { tie = "K" }``): at every point its value is this
    #: expression of the other scalars (``value`` is the one at the defaults)
    tie: str | None = None


@dataclass(frozen=True)
class Binding:
    kernel: str | None
    grid: tuple[str | int, ...]
    block: tuple[str | int, ...]
    shared_bytes: str | int | None
    tensors: tuple[TensorSpec, ...]
    scalars: tuple[ScalarSpec, ...]
    shapes: tuple[tuple[tuple[str, Number], ...], ...] = ()
    path: str = "<binding>"
    #: (size scalar, step): the sizes the kernel is only ever run at are multiples of step
    multiples: tuple[tuple[str, int], ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    line: int = field(default=1, compare=False)  # where the binding starts in its file

    # ------------------------------------------------------------------ queries
    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tensors) + tuple(s.name for s in self.scalars)

    def tensor(self, name: str) -> TensorSpec:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    @property
    def defaults(self) -> dict[str, Number]:
        return {s.name: s.value for s in self.scalars}

    def test_points(self) -> list[dict[str, Number]]:
        """The default scalar values followed by each ``[[check.shapes]]`` override set."""
        base = self.defaults
        return [base] + [{**base, **dict(p)} for p in self.shapes]

    # ------------------------------------------------------------------ resolution
    def resolve(self, overrides: Mapping[str, Number] | None = None) -> Resolved:
        overrides = dict(overrides or {})
        unknown = sorted(set(overrides) - {s.name for s in self.scalars})
        if unknown:
            raise _bad(
                self.path,
                line=self.line,
                reason=f"--set names unknown scalar parameter(s) {', '.join(unknown)}; "
                f"scalars are: {', '.join(s.name for s in self.scalars) or 'none'}",
            )
        env: dict[str, Number] = {}
        for s in self.scalars:
            v = overrides.get(s.name, s.value)
            if s.dtype is not None and dtype_of(s.dtype).kind in "iub":
                v = int(v)
            env[s.name] = v
        try:
            for s in self.scalars:  # a tied size follows the sizes it is tied to
                if s.tie is not None:
                    env[s.name] = int(eval_c_expr(s.tie, env))
            shapes = {
                t.name: tuple(_as_size(eval_c_expr(d, env), t.name) for d in t.shape)
                for t in self.tensors
            }
            grid = _dim3(tuple(eval_c_expr(g, env) for g in self.grid), "grid")
            block = _dim3(tuple(eval_c_expr(b, env) for b in self.block), "block")
            smem = int(eval_c_expr(self.shared_bytes, env)) if self.shared_bytes is not None else 0
        except ExprError as exc:
            raise _bad(self.path, str(exc), self.line) from None
        return Resolved(self, env, shapes, grid, block, smem)


@dataclass(frozen=True)
class Resolved:
    """A binding with every expression evaluated for one set of scalar values."""

    binding: Binding
    scalars: dict[str, Number]
    shapes: dict[str, tuple[int, ...]]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int

    def dtype(self, name: str) -> np.dtype:
        return self.binding.tensor(name).np_dtype


def binding_problems(
    binding: Binding, kernel: str, params: Sequence[tuple[str, bool]]
) -> list[str]:
    """What keeps ``binding`` from running ``kernel``, whose parameters are ``params`` ((name,
    is a pointer), in order): every problem in words, none when the binding validates.

    A scalar parameter needs a value, a tensor must be a pointer parameter of the kernel, and
    every expression must evaluate at the default values.  (A scalar the kernel does not take is
    a size its shapes use, such as a number of bins; a pointer the binding leaves out is the
    lifter's to report, with the construct that uses it.)"""
    kinds = dict(params)
    tensors = {t.name for t in binding.tensors}
    scalars = {s.name for s in binding.scalars}
    out = []
    for name in binding.param_names:
        if name not in kinds:
            if name in tensors:
                known = ", ".join(n for n, _ in params) or "none"
                out.append(f"'{name}' is not a parameter of kernel '{kernel}' (it has {known})")
        elif kinds[name] and name in scalars:
            out.append(f"'{name}' is a pointer: give it shape, dtype and role, not a value")
        elif not kinds[name] and name in tensors:
            out.append(f"'{name}' is a scalar: give it a value (`{name} = ...`), not a shape")
    for name, pointer in params:
        if not pointer and name not in scalars and name not in tensors:
            out.append(f"scalar parameter '{name}' has no value: add `{name} = ...` under [params]")
    if not out:
        try:
            binding.resolve()
        except DiagnosticError as exc:
            out.extend(d.message.removeprefix("invalid binding: ") for d in exc.diagnostics)
    return out


def _as_size(v: Number, name: str) -> int:
    if isinstance(v, float) and not v.is_integer():
        raise ExprError(f"shape of '{name}' is not an integer ({v})")
    if v < 0:
        raise ExprError(f"shape of '{name}' is negative ({v})")
    return int(v)


def _dim3(vals: tuple[Number, ...], what: str) -> tuple[int, int, int]:
    if not 1 <= len(vals) <= 3:
        raise ExprError(f"{what} needs 1 to 3 dimensions, got {len(vals)}")
    out = tuple(int(v) for v in vals) + (1,) * (3 - len(vals))
    if any(v <= 0 for v in out):
        raise ExprError(f"{what} dimensions must be positive, got {out}")
    return out  # type: ignore[return-value]


class _BindingError(DiagnosticError):
    """A C2N0003 that knows the TOML key at fault (``("params", "x")``), so that whoever has
    the file's text can point at the key's line."""

    def __init__(self, diagnostic: Diagnostic, key: tuple[str, ...]) -> None:
        super().__init__(diagnostic)
        self.key = key


def _bad(path: str, reason: str, line: int = 1, key: tuple[str, ...] = ()) -> DiagnosticError:
    return _BindingError(make("C2N0003", SourceLoc(path, line, 1), reason=reason), key)


def _located(exc: DiagnosticError, text: str, prefix: tuple[str, ...]) -> DiagnosticError:
    """``exc`` pointing at the line of its key in ``text`` (keys under the table ``prefix``)."""
    key = getattr(exc, "key", ())
    line = _key_line(text, prefix + key) if key and text else None
    if line is None:
        return exc
    import dataclasses

    d = exc.diagnostics[0]
    return DiagnosticError(
        [dataclasses.replace(d, loc=SourceLoc(d.loc.file, line, 1)), *exc.diagnostics[1:]]
    )


def _key_parts(text: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("\"'") for p in text.split("."))


def _key_line(text: str, key: tuple[str, ...]) -> int | None:
    """The first line of a TOML text that defines ``key`` or something under it: a ``[a.b]`` /
    ``[[a.b]]`` header, ``b = ...`` / ``b.c = ...`` in the ``[a]`` table, or the inline table
    ``a = { b = ... }`` holding it (tomllib keeps no positions, so the text is scanned)."""
    import re

    header = re.compile(r"^\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
    assign = re.compile(r"^([A-Za-z0-9_\-.\"' ]+?)\s*=")
    section: tuple[str, ...] = ()
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        m = header.match(line)
        if m:
            section = _key_parts(m.group(1))
            if section[: len(key)] == key:
                return no
            continue
        m = assign.match(line)
        if not m:
            continue
        full = section + _key_parts(m.group(1))
        inline = key[: len(full)] == full and line[m.end() :].lstrip().startswith("{")
        if full[: len(key)] == key or inline:  # the key, or the inline table holding it
            return no
    return None


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class BindingFile:
    """Every binding of one ``.toml`` file: one per kernel it names, or a single unnamed one."""

    path: str
    bindings: tuple[Binding, ...]

    @property
    def kernels(self) -> tuple[str, ...]:
        """The kernels the file names (empty for one unnamed binding)."""
        return tuple(b.kernel for b in self.bindings if b.kernel is not None)

    def only(self) -> Binding | None:
        """The file's binding when it holds exactly one, else None."""
        return self.bindings[0] if len(self.bindings) == 1 else None

    def for_kernel(self, name: str, tu: Any = None, *, explicit: bool = False) -> Binding | None:
        """The binding of kernel ``name``; None when the file binds other kernels only.

        A named binding applies to the kernel it names (``tu`` resolves C++ spellings of template
        instances).  An unnamed binding applies when it was given explicitly, when there is no
        ``tu`` to count kernels in, or when the file ``tu`` defines a single kernel."""
        named = [b for b in self.bindings if b.kernel is not None]
        for b in named:  # the instance's own entry first, then its template's
            if names_kernel(b.kernel, name, tu, template=False):  # type: ignore[arg-type]
                return b
        for b in named:
            if names_kernel(b.kernel, name, tu):  # type: ignore[arg-type]
                return b
        unnamed = [b for b in self.bindings if b.kernel is None]
        if unnamed and (explicit or tu is None or len(kernel_names(tu)) <= 1):
            return unnamed[0]
        return None

    def describe(self) -> str:
        """What the file binds, for messages: ``'a', 'b'`` or that it names no kernel."""
        if self.kernels:
            return ", ".join(f"'{k}'" for k in self.kernels)
        return 'one binding that names no kernel (add `kernel = "NAME"`)'


def kernel_names(tu: Any) -> list[str]:
    """Every kernel of a translation unit, refused ones included."""
    names = [f.name for f in tu.kernels]
    return names + [n for n in tu.rejected if n not in names]


def names_kernel(bound: str, name: str, tu: Any = None, *, template: bool = True) -> bool:
    """Whether a binding's ``kernel`` (as written) names kernel ``name`` of ``tu``: the same
    kernel, or (``template``) the template that ``name`` (``reduce<256, float32>``) instantiates."""
    if bound.replace(" ", "") == name.replace(" ", ""):
        return True
    if template and "<" not in bound and name.split("<")[0].strip() == bound.strip():
        return True
    if tu is None or "<" not in bound + name:
        return False
    from cuda2nki.frontend.select import select_kernel

    try:
        return select_kernel(tu, bound) == name
    except DiagnosticError:
        return False


def another_kernel(bf: BindingFile, kernel: str, line: int = 1) -> DiagnosticError:
    """C2N0007: the binding file ``bf`` has no binding for ``kernel``."""
    return DiagnosticError(
        make("C2N0007", SourceLoc(bf.path, line, 1), kernel=kernel, known=bf.describe())
    )


def load_bindings(path: str | Path) -> BindingFile:
    """Read a binding ``.toml`` with all the kernels it binds; any problem is a C2N0003."""
    p = Path(path)
    try:
        raw = read_regular(p).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DiagnosticError(
            make("C2N0001", SourceLoc(str(p), 1, 1), path=str(p), reason=str(exc))
        ) from None
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", 1) or 1
        col = getattr(exc, "colno", 1) or 1
        raise DiagnosticError(
            make("C2N0003", SourceLoc(str(p), line, col), reason=str(exc))
        ) from None
    return binding_file_from_dict(data, str(p), raw)


def load_binding(path: str | Path, kernel: str | None = None) -> Binding:
    """The binding of ``kernel`` in a ``.toml`` file (C2N0007 if it binds other kernels only);
    without ``kernel``, the file's only binding."""
    bf = load_bindings(path)
    if kernel is not None:
        b = bf.for_kernel(kernel, explicit=True)
        if b is None:
            raise another_kernel(bf, kernel)
        return b
    b = bf.only()
    if b is None:
        raise several_kernels(bf)
    return b


def several_kernels(bf: Any) -> DiagnosticError:
    """C2N0002: a binding file of several kernels used without naming one."""
    return DiagnosticError(
        make(
            "C2N0002",
            SourceLoc(bf.path, 1, 1),
            option="--kernel",
            reason=f"{bf.path} binds several kernels ({bf.describe()}); name one",
        )
    )


def binding_file_from_dict(
    data: Mapping[str, Any], path: str = "<binding>", text: str = ""
) -> BindingFile:
    """The bindings of a parsed ``.toml``: the top-level one (if it has ``[launch]`` or
    ``[params]``) and one per ``[kernels.NAME]`` table (``text``, the file's text, places them)."""
    tables = data.get("kernels", {})
    if not isinstance(tables, Mapping) or not all(isinstance(t, Mapping) for t in tables.values()):
        raise _bad(path, "[kernels] must hold one table per kernel: [kernels.NAME]")
    out: list[Binding] = []
    top = {k: v for k, v in data.items() if k != "kernels"}
    if not tables or "launch" in top or "params" in top:
        if tables and not isinstance(top.get("kernel"), str):
            raise _bad(
                path,
                "a file with [kernels.NAME] tables binds a top-level [launch]/[params] to the "
                'kernel named by `kernel = "..."`; name it, or move it into its own table',
            )
        try:
            out.append(binding_from_dict(top, path))
        except DiagnosticError as exc:
            raise _located(exc, text, ()) from None
    for name, table in tables.items():
        if "kernel" in table and table["kernel"] != name:
            raise _bad(
                path,
                f"[kernels.{name}] says kernel = {table['kernel']!r}; the table's name is the kernel",
            )
        if any(b.kernel == name for b in out):
            raise _bad(path, f"kernel '{name}' is bound twice")
        try:
            b = binding_from_dict({**table, "kernel": name}, path, _table_line(text, name))
        except DiagnosticError as exc:
            raise _located(exc, text, ("kernels", name)) from None
        out.append(b)
    return BindingFile(path, tuple(out))


def _table_line(text: str, name: str) -> int:
    """The line of ``[kernels.NAME...]`` in the file's text (1 when it cannot be found)."""
    import re

    key = rf'(?:{re.escape(name)}|"{re.escape(name)}"|\'{re.escape(name)}\')'
    pat = re.compile(rf"^[ \t]*\[\s*kernels\s*\.\s*{key}\s*[.\]]", re.M)
    m = pat.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def binding_from_dict(data: Mapping[str, Any], path: str = "<binding>", line: int = 1) -> Binding:
    """Build a :class:`Binding` from the parsed TOML structure (also used for inferred bindings);
    ``line``: where it starts in its file (problems are reported there)."""
    try:
        return _binding_from_dict(data, path, line)
    except DiagnosticError as exc:
        if line <= 1:
            raise
        import dataclasses

        moved = DiagnosticError(
            [
                dataclasses.replace(d, loc=SourceLoc(path, line, 1))
                if d.loc == SourceLoc(path, 1, 1)
                else d
                for d in exc.diagnostics
            ]
        )
        moved.key = getattr(exc, "key", ())  # type: ignore[attr-defined]
        raise moved from None


def _binding_from_dict(data: Mapping[str, Any], path: str, line: int) -> Binding:
    kernel = data.get("kernel")
    if kernel is not None and not isinstance(kernel, str):
        raise _bad(path, f"kernel must be a name, got {kernel!r}", line, ("kernel",))
    launch = data.get("launch")
    if not isinstance(launch, Mapping):
        raise _bad(path, "missing [launch] table with grid and block")
    grid, block = _dims(launch.get("grid"), "grid", path), _dims(launch.get("block"), "block", path)
    params = data.get("params")
    if not isinstance(params, Mapping):
        raise _bad(
            path,
            "missing [params] table (every kernel parameter: shape/dtype/role or a default value)",
        )
    tensors, scalars = [], []
    for name, spec in params.items():
        if isinstance(spec, Mapping) and "shape" in spec:
            tensors.append(_tensor_spec(name, spec, path))
        elif isinstance(spec, Mapping) and "value" in spec:
            scalars.append(
                ScalarSpec(
                    name,
                    _number(spec["value"], name, path),
                    _opt_dtype(spec.get("dtype"), name, path),
                )
            )
        elif isinstance(spec, int | float) and not isinstance(spec, bool):
            scalars.append(ScalarSpec(name, spec))
        elif isinstance(spec, Mapping) and isinstance(spec.get("tie"), str | int):
            scalars.append(ScalarSpec(name, 0, "int32", str(spec["tie"])))
        else:
            raise _bad(
                path,
                f"parameter '{name}' needs either a table with shape/dtype/role or a default value",
                key=("params", name),
            )
    check = data.get("check", {})
    shapes = []
    for i, pt in enumerate(check.get("shapes", []) if isinstance(check, Mapping) else []):
        if not isinstance(pt, Mapping):
            raise _bad(path, f"check.shapes[{i}] must be a table of scalar values", key=_SHAPES)
        shapes.append(tuple((k, _number(v, k, path, _SHAPES)) for k, v in pt.items()))
    meta = {k: v for k, v in data.items() if k not in ("kernel", "launch", "params")}
    smem = launch.get("shared_bytes")
    multiples = _multiples(check, {s.name for s in scalars}, path)
    scalars = _tie_values(scalars, path)
    b = Binding(
        kernel=kernel,
        grid=grid,
        block=block,
        shared_bytes=smem,
        tensors=tuple(tensors),
        scalars=tuple(scalars),
        shapes=tuple(shapes),
        path=path,
        multiples=multiples,
        meta=meta,
        line=line,
    )
    for pt in b.test_points()[1:]:
        unknown = set(pt) - {s.name for s in b.scalars}
        if unknown:
            raise _bad(
                path,
                f"check.shapes names unknown scalar(s) {', '.join(sorted(unknown))}",
                key=_SHAPES,
            )
    return b


def _tie_values(scalars: list[ScalarSpec], path: str) -> list[ScalarSpec]:
    """Each tied size with its value at the defaults of the sizes it is tied to."""
    env = {s.name: s.value for s in scalars if s.tie is None}
    out = []
    for s in scalars:
        if s.tie is not None:
            try:
                v = eval_c_expr(s.tie, env)
            except ExprError as exc:
                raise _bad(path, f"tie of '{s.name}': {exc}", key=("params", s.name)) from None
            s = ScalarSpec(s.name, int(v), s.dtype, s.tie)
        out.append(s)
    return out


_SHAPES = ("check", "shapes")
_MULTIPLES = ("check", "multiples")


def _multiples(check: Any, scalars: set[str], path: str) -> tuple[tuple[str, int], ...]:
    """``[check.multiples]``: size scalar -> the step its sizes come in (a positive integer)."""
    got = check.get("multiples", {}) if isinstance(check, Mapping) else {}
    if not isinstance(got, Mapping):
        raise _bad(path, "check.multiples must be a table of size = step", key=_MULTIPLES)
    out = []
    for name, step in got.items():
        if name not in scalars:
            raise _bad(path, f"check.multiples names unknown scalar '{name}'", key=_MULTIPLES)
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise _bad(
                path,
                f"check.multiples: the step of '{name}' must be a positive integer, got {step!r}",
                key=_MULTIPLES,
            )
        out.append((name, step))
    return tuple(out)


def _dims(v: Any, what: str, path: str) -> tuple[str | int, ...]:
    if isinstance(v, int | str):
        v = [v]
    if (
        not isinstance(v, list)
        or not 1 <= len(v) <= 3
        or not all(isinstance(x, int | str) for x in v)
    ):
        raise _bad(
            path,
            f"launch.{what} must be a list of 1-3 integers or expressions",
            key=("launch", what),
        )
    return tuple(v)


def _tensor_spec(name: str, spec: Mapping[str, Any], path: str) -> TensorSpec:
    key = ("params", name)
    shape = spec["shape"]
    if not isinstance(shape, list) or not all(isinstance(d, int | str) for d in shape):
        raise _bad(path, f"'{name}'.shape must be a list of integers or expressions", key=key)
    if "dtype" not in spec:
        raise _bad(path, f"tensor parameter '{name}' has no dtype", key=key)
    dtype = _opt_dtype(spec["dtype"], name, path)
    role = spec.get("role")
    if role not in ("in", "out", "inout"):
        raise _bad(
            path,
            f'tensor parameter \'{name}\' needs role = "in" | "out" | "inout" (got {role!r})',
            key=key,
        )
    rng = spec.get("range")
    if rng is not None and (not isinstance(rng, list) or len(rng) != 2):
        raise _bad(path, f"'{name}'.range must be [lo, hi]", key=key)
    dist = spec.get("distribution")
    if dist is not None and dist not in _DISTRIBUTIONS:
        raise _bad(
            path, f"'{name}'.distribution must be one of {', '.join(_DISTRIBUTIONS)}", key=key
        )
    offset = spec.get("offset", 0)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise _bad(path, f"'{name}'.offset must be a whole number of elements >= 0", key=key)
    return TensorSpec(
        name,
        tuple(shape),
        dtype,
        role,  # type: ignore[arg-type]
        tuple(rng) if rng else None,  # type: ignore[arg-type]
        dist,
        offset,
    )


def _opt_dtype(v: Any, name: str, path: str) -> str | None:
    if v is None:
        return None
    try:
        dtype_of(str(v))
    except KeyError:
        raise _bad(
            path,
            f"'{name}' has unknown dtype {v!r}; known: {', '.join(_DTYPES)}",
            key=("params", name),
        ) from None
    return _ALIASES.get(str(v), str(v))


def _number(v: Any, name: str, path: str, key: tuple[str, ...] | None = None) -> Number:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _bad(path, f"'{name}' must be a number (got {v!r})", key=key or ("params", name))
    return v


# --------------------------------------------------------------------------- inputs

_DISTRIBUTIONS = ("normal", "uniform", "positive")


def round_to(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Cast with round-to-nearest-even (ml_dtypes' casts round RNE)."""
    return np.asarray(arr).astype(dtype)


def generate_inputs(
    resolved: Resolved,
    seed: int = 0,
    provided: Mapping[str, np.ndarray] | None = None,
    *,
    distribution: str | None = None,
    out_fill: float = 0.0,
) -> dict[str, np.ndarray]:
    """Arrays for every tensor parameter: ``provided`` ones coerced, the rest generated from ``seed``.

    ``in``/``inout`` tensors get random values (per-tensor ``distribution`` / ``range``, else
    ``distribution``, else standard normal; integers uniform in ``range`` or ``[0, 64)``);
    ``out`` tensors are filled with ``out_fill``.
    """
    provided = dict(provided or {})
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for t in resolved.binding.tensors:
        shape, dt = resolved.shapes[t.name], t.np_dtype
        if t.name in provided:
            out[t.name] = coerce_array(provided[t.name], t, shape, resolved.binding.path)
        elif t.role == "out":
            out[t.name] = (
                np.full(shape, out_fill, dtype=np.float64).astype(dt)
                if dt.kind == "f" or dt.kind == "V"
                else np.zeros(shape, dt)
            )
        else:
            out[t.name] = _random(rng, t, shape, dt, resolved.scalars, distribution)
    return out


def _random(
    rng: np.random.Generator,
    t: TensorSpec,
    shape: tuple[int, ...],
    dt: np.dtype,
    env: Mapping[str, Number],
    distribution: str | None,
) -> np.ndarray:
    lo, hi = (
        (eval_c_expr(t.range[0], env), eval_c_expr(t.range[1], env)) if t.range else (None, None)
    )
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if lo is None else int(lo)
        hi = 64 if hi is None else int(hi)
        if dt.itemsize == 8:  # the whole 64-bit range may be asked for
            return rng.integers(lo, max(hi, lo + 1), size=shape, dtype=dt)
        return rng.integers(lo, max(hi, lo + 1), size=shape).astype(dt)
    dist = t.distribution or distribution or ("uniform" if t.range else "normal")
    if dist == "uniform":
        a, b = (float(lo), float(hi)) if lo is not None else (-1.0, 1.0)
        vals = rng.uniform(a, b, size=shape)
    elif dist == "positive":
        vals = rng.uniform(0.1, 2.0, size=shape)
    else:
        vals = rng.standard_normal(size=shape)
    return round_to(vals.astype(np.float32), dt)


def coerce_array(
    arr: np.ndarray, t: TensorSpec, shape: tuple[int, ...], path: str = "<inputs>"
) -> np.ndarray:
    """Coerce a user-supplied array to the declared dtype and shape (NKI.md §14.8)."""
    a = np.asarray(arr)
    dt = t.np_dtype
    if a.size != math.prod(shape):
        raise _bad(path, f"array '{t.name}' has {a.size} elements, the binding says shape {shape}")
    if t.dtype in NPZ_WIDENED or dt == np.float16:
        if a.dtype.kind not in "fV" and a.dtype != dt:
            raise _bad(
                path, f"array '{t.name}' has dtype {a.dtype}, expected a float array for {t.dtype}"
            )
        return round_to(a.astype(np.float64) if a.dtype != dt else a, dt).reshape(shape)
    if a.dtype == dt:
        return a.reshape(shape)
    if np.can_cast(a.dtype, dt, casting="safe") or (a.dtype.kind == dt.kind == "f"):
        return a.astype(dt).reshape(shape)
    raise _bad(
        path, f"array '{t.name}' has dtype {a.dtype}, which cannot be safely cast to {t.dtype}"
    )


def load_npz(path: str | Path) -> dict[str, np.ndarray]:
    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise DiagnosticError(
            make("C2N0001", SourceLoc(str(p), 1, 1), path=str(p), reason=str(exc))
        ) from None


def to_disk(arr: np.ndarray) -> np.ndarray:
    """bf16/fp8 arrays are written as float32 (``.npz`` cannot carry them)."""
    a = np.asarray(arr)
    return a.astype(np.float32) if dtype_name(a.dtype) in NPZ_WIDENED else a


def save_npz(path: str | Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write arrays atomically to ``path`` (bf16/fp8 widened to float32)."""
    import io

    from cuda2nki.fileio import write_atomic

    buf = io.BytesIO()
    np.savez(buf, **{k: to_disk(v) for k, v in arrays.items()})
    write_atomic(path, buf.getvalue())


def parse_set_options(items: list[str] | None) -> dict[str, Number]:
    """``--set N=129 --set alpha=0.5`` -> ``{"N": 129, "alpha": 0.5}`` (C2N0002 on bad syntax)."""
    out: dict[str, Number] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise DiagnosticError(
                make("C2N0002", option="--set", reason=f"expected NAME=VALUE, got {item!r}")
            )
        try:
            out[name.strip()] = int(value, 0)
        except ValueError:
            try:
                out[name.strip()] = float(value)
            except ValueError:
                raise DiagnosticError(
                    make("C2N0002", option="--set", reason=f"{item!r}: not a number")
                ) from None
    return out
