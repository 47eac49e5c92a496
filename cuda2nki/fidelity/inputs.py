"""Inputs that find bugs: several distributions and special values, and shapes with ragged tails.

Seed ``s`` draws from ``DISTRIBUTIONS[s % 5]``: standard normal, uniform[-1, 1] (not [0, 1), which
hides sign bugs), heavy-tailed (Student t with 3 degrees of freedom), special values (±0, ±1,
large magnitudes safe for the dtype, subnormals where the dtype has them, mixed into normal data),
and normal again with another stream.  Integer tensors use their binding ``range``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from cuda2nki.binding import Binding, Number, Resolved, generate_inputs, round_to

DISTRIBUTIONS = ("normal", "uniform", "heavy", "special", "normal2")


@dataclass(frozen=True)
class TestPoint:
    values: dict[str, Number]
    generated: bool = False  # added by the checker (tail or edge), not from the binding

    __test__ = False  # not a pytest class


def make_inputs(r: Resolved, seed: int) -> dict[str, np.ndarray]:
    dist = DISTRIBUTIONS[seed % len(DISTRIBUTIONS)]
    base = generate_inputs(
        r, seed=1000 + seed, distribution="uniform" if dist == "uniform" else None
    )
    if dist in ("normal", "uniform", "normal2"):
        return base
    rng = np.random.default_rng(2000 + seed)
    out = {}
    for t in r.binding.tensors:
        a = base[t.name]
        if (
            t.role == "out"
            or a.dtype.kind not in "fV"
            or t.range is not None
            or t.distribution is not None
        ):
            out[t.name] = a
            continue
        shape = r.shapes[t.name]
        if dist == "heavy":
            vals = rng.standard_t(3, size=shape)
        else:
            vals = _special(rng, shape, a.dtype)
        out[t.name] = round_to(vals.astype(np.float32), a.dtype)
    return out


def _special(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    vals = rng.standard_normal(size=shape)
    n = vals.size
    if n == 0:
        return vals
    flat = vals.reshape(-1)
    info = np.finfo(np.float32) if dtype.itemsize >= 4 else None
    big = 1e4 if info is None else 1e6  # large but far from overflow after a few products
    tiny = 1e-40 if dtype == np.float32 else 1e-6  # fp32 subnormal / small for narrow types
    specials = np.array([0.0, -0.0, 1.0, -1.0, big, -big, tiny, -tiny])
    k = max(1, n // 8)
    idx = rng.choice(n, size=min(k, n), replace=False)
    flat[idx] = rng.choice(specials, size=idx.size)
    return vals


def _shape_scalars(b: Binding) -> list[str]:
    names = {
        s.name for s in b.scalars if isinstance(s.value, int) and not isinstance(s.value, bool)
    }
    used = set()
    for t in b.tensors:
        for d in t.shape:
            for n in names:
                if (
                    isinstance(d, str)
                    and n in d.replace("(", " ").replace(")", " ").replace(",", " ").split()
                ):
                    used.add(n)
                elif d == n:
                    used.add(n)
    return sorted(used)


def test_points(
    b: Binding, overrides: Mapping[str, Number] | None = None, *, extra: bool = True
) -> list[TestPoint]:
    """The binding's points (with ``overrides``), then a ragged-tail point and a size-1 edge point
    when the binding's points lack them."""
    overrides = dict(overrides or {})
    pts = [TestPoint({**p, **overrides}) for p in b.test_points()]
    if overrides:
        pts = pts[:1]
    if not extra:
        return pts
    dims = _shape_scalars(b)
    if dims and not any(any(int(p.values[d]) % 128 for d in dims) for p in pts):
        base = pts[0].values
        pts.append(TestPoint({**base, **{d: int(base[d]) + 1 for d in dims}}, generated=True))
    if dims and not any(any(int(p.values[d]) == 1 for d in dims) for p in pts):
        pts.append(TestPoint({**pts[0].values, dims[0]: 1}, generated=True))
    return pts
