"""Why a name the literal lowering cannot bind is refused, said precisely.

A file-scope ``__device__`` or ``__constant__`` variable that is not a constant table with a
literal initialiser is memory outside the kernel's parameters: the host fills it with
``cudaMemcpyToSymbol`` or other kernels leave state in it, and a port, whose data all arrive as
tensors, has no place for it.  Any other name is unknown to the lowering.
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A

_SPACE = {"device": "__device__", "constant": "__constant__", "host_const": "const"}


def unbound_name_reason(tu: A.TranslationUnit, name: str) -> str:
    g = next((g for g in tu.globals if g.name == name), None)
    if g is None:
        return f"global or unknown name '{name}'"
    space = _SPACE.get(g.space, g.space)
    kind = "array" if isinstance(g.ty, A.ArrayType) else "variable"
    if g.init is None or g.space == "device":
        return (
            f"the {space} {kind} '{name}' (global memory the host or other kernels fill; "
            "a port receives data only as tensor parameters)"
        )
    return f"the {space} {kind} '{name}' (its initialiser is not made of numbers)"


def constant_scalars(tu: A.TranslationUnit) -> dict[str, tuple[str, str]]:
    """``__constant__`` scalars with a numeric literal initialiser (``__constant__ float gain =
    1.5f;``): name -> (uniform Python spelling, "float" or "int").  Device code cannot write
    them, so the kernel reads the initialiser's value, as the interpreter does."""
    out: dict[str, tuple[str, str]] = {}
    for g in tu.globals:
        if g.space != "constant" or not isinstance(g.ty, A.ScalarType):
            continue
        value = _number(g.init)
        if value is None or g.ty.name in ("float64", "bool"):
            continue
        if g.ty.is_float:
            out[g.name] = (f"np.float32({float(value)!r})", "float")
        elif float(value).is_integer():
            bits = 8 * _BYTES.get(g.ty.name, 4)
            low = int(value) % (1 << bits)
            signed = not g.ty.name.startswith("uint")
            out[g.name] = (str(low - (1 << bits) if signed and low >> (bits - 1) else low), "int")
    return out


_BYTES = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int64": 8, "uint64": 8}


def _number(e: A.Expr | None) -> int | float | None:
    sign = 1
    if isinstance(e, A.Unary) and e.op == "-":
        sign, e = -1, e.operand
    if isinstance(e, A.IntLit | A.FloatLit):
        return sign * e.value
    return None
