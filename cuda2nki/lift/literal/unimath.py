"""Math functions of uniform values, computed when the kernel is traced (literal lowering).

``for (int i = 1; i <= __log2f(HEIGHT); i++)`` and ``int p = __powf(2, i);`` compute the same value
in every thread from constants, parameters and loop counters: the port computes it once, with
NumPy in float64 rounded to float32 (the correctly rounded value the SIMT interpreter gives; a
GPU's fast-math intrinsic may differ by a few ulp), so that the loop stays a trace-time loop
instead of a per-thread one whose trip count would depend on data.
"""

from __future__ import annotations

from cuda2nki.lift.literal.values import Uni

#: CUDA math function (its float name without ``f``/``__`` decoration) -> NumPy function, arity
NUMPY = {
    "log2": ("np.log2", 1), "log": ("np.log", 1), "log10": ("np.log10", 1),
    "exp": ("np.exp", 1), "exp2": ("np.exp2", 1), "sqrt": ("np.sqrt", 1),
    "pow": ("np.power", 2), "floor": ("np.floor", 1), "ceil": ("np.ceil", 1),
    "fabs": ("np.abs", 1), "trunc": ("np.trunc", 1), "cbrt": ("np.cbrt", 1),
    "sin": ("np.sin", 1), "cos": ("np.cos", 1), "tanh": ("np.tanh", 1),
    "fdivide": ("np.divide", 2),  # ``__fdividef``: a quotient is correctly rounded either way
}  # fmt: skip


def base_name(func: str) -> str:
    """``__log2f``, ``log2f`` and ``log2`` all name ``log2``."""
    name = func[2:] if func.startswith("__") else func
    if name not in NUMPY and name.endswith("f") and name[:-1] in NUMPY:
        name = name[:-1]
    return name


def uniform_math(func: str, args: list[object], is_float: bool) -> Uni | None:
    """``func(args)`` as a float32 value computed at trace time, when every argument is
    uniform and the function has a NumPy counterpart; else None."""
    entry = NUMPY.get(base_name(func))
    if entry is None or not is_float or not all(isinstance(a, Uni) for a in args):
        return None
    fn, arity = entry
    if len(args) != arity:
        return None
    spelled = ", ".join(f"np.float64(np.float32({a.expr}))" for a in args)  # type: ignore[attr-defined]
    return Uni(f"np.float32({fn}({spelled}))", "float")
