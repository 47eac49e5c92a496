"""Sizes chosen so that every tensor has elements.

An extent read from a guarded index expression is a difference of sizes: ``out[i - w]`` under
``if (i >= w && i < n)`` writes ``n - w`` elements.  Sizes the source leaves open get a default
(256) and sizes the host gives keep its value, and either may leave such an extent empty or
negative (``w = 512`` from the launch, ``n`` a default 256: ``n - w = -256``); the kernel then
does no work there and the binding cannot be resolved.  The extent only holds where the guard
lets threads through, so the sizes are moved to where it does: a size the extent grows with is
raised (a default before a host value), else one it shrinks with is lowered, until the extent
has :data:`TARGET` elements, with a note saying so.  :func:`extents_positive` lets later
choices (the halving of sizes too large to simulate) keep to that.
"""

from __future__ import annotations

import re

from cuda2nki.diagnostics import make
from cuda2nki.frontend import ast as A

#: the elements an empty extent is given (the default size of a dimension)
TARGET = 256

#: rounds of raising sizes (each fixes at least one extent, or stops)
_ROUNDS = 8


def keep_positive(
    params: dict, free: set[str], given: set[str], fn: A.Function, kernel: str, diags: list
) -> None:
    """Move the ``free`` sizes of ``params`` (those in ``given`` came from the host) until every
    tensor extent is positive, with a note per size moved."""
    moved: dict[str, tuple[int, str, str]] = {}  # size -> (value it had, extent, tensor)
    for _ in range(_ROUNDS):
        env = _env(params)
        bad = _first_empty(params, env)
        if bad is None:
            break
        tensor, dim, value = bad
        step = _fix(dim, value, env, params, free, given)
        if step is None:
            break
        name, new = step
        moved.setdefault(name, (env[name], dim, tensor))
        params[name] = new
    for name, (was, dim, tensor) in moved.items():
        p = next(q for q in fn.params if q.name == name)
        host = f"; the host's {was} leaves it empty" if name in given else ""
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f"{name} = {params[name]}",
                kernel=kernel,
                source=f"the extent {dim} of '{tensor}', which is empty at {name} = {was}: "
                f"its guard lets threads through only where it is positive{host}",
            )
        )


def extents_positive(params: dict, env: dict) -> bool:
    """Whether every tensor extent of ``params`` is positive at the sizes ``env``."""
    return _first_empty(params, env) is None


def _env(params: dict) -> dict:
    return {
        n: v for n, v in params.items() if isinstance(v, int | float) and not isinstance(v, bool)
    }


def _first_empty(params: dict, env: dict) -> tuple[str, str, float] | None:
    """(tensor, extent text, value) of the first extent that is not positive at ``env``."""
    for name, spec in params.items():
        if not isinstance(spec, dict):
            continue
        for d in spec.get("shape") or ():
            if not isinstance(d, str):
                continue
            v = _value(d, env)
            if v is not None and v < 1:
                return name, d, v
    return None


def _value(text: str, env: dict) -> float | None:
    from cuda2nki.binding import eval_c_expr

    try:
        return float(eval_c_expr(text, env))
    except Exception:  # noqa: BLE001 - an extent over names the sizes do not give
        return None


def _fix(
    dim: str, value: float, env: dict, params: dict, free: set[str], given: set[str]
) -> tuple[str, int] | None:
    """(size, new value) that makes the extent ``dim`` hold :data:`TARGET` elements without
    emptying another: a size it grows with, a default before a host value, else a size it
    shrinks with, lowered while it stays positive."""
    names = [
        n for n in re.findall(r"[A-Za-z_]\w*", dim) if n in free and isinstance(env.get(n), int)
    ]
    names = sorted(dict.fromkeys(names), key=lambda n: (n in given, names.index(n)))
    want = TARGET - value
    for grow in (True, False):
        for name in names:
            slope = _slope(dim, name, env)
            if slope is None or (slope > 0) != grow or slope == 0:
                continue
            steps = -(-want // abs(slope))
            new = int(env[name] + steps if grow else env[name] - steps)
            if not grow and new < 1:
                steps = -(-(1 - value) // abs(slope))  # at least one element
                new = int(env[name] - steps)
                if new < 1:
                    continue
            trial = {**env, name: new}
            if (_value(dim, trial) or 0) >= 1 and all(_not_emptied(params, env, trial)):
                return name, new
    return None


def _slope(dim: str, name: str, env: dict) -> float | None:
    a, b = _value(dim, env), _value(dim, {**env, name: env[name] + 1})
    return None if a is None or b is None else b - a


def _not_emptied(params: dict, env: dict, trial: dict):
    """Per extent: it is not made empty by ``trial`` where it had elements at ``env``."""
    for spec in params.values():
        if not isinstance(spec, dict):
            continue
        for d in spec.get("shape") or ():
            if isinstance(d, str):
                before, after = _value(d, env), _value(d, trial)
                yield before is None or after is None or before < 1 or after >= 1
