"""Affine analysis of CUDA index expressions.

Index arithmetic is represented as :class:`Poly`, an integer polynomial over *atoms*:

* thread/block coordinates ``threadIdx.x``, ``blockIdx.y`` ... and launch sizes ``blockDim.x``,
  ``gridDim.z`` (their canonical spelling),
* the derived global thread index ``gid.x`` = ``blockIdx.x * blockDim.x + threadIdx.x`` (see
  :func:`canonical`),
* scalar parameters (``N``), loop induction variables (``%k``, a leading ``%``),
* quasi-affine atoms :class:`DivAtom` / :class:`ModAtom` for ``a / b`` and ``a % b`` that cannot be
  simplified, and :class:`OpaqueAtom` for integers read from memory (gathers) or computed by
  arithmetic the analysis does not model.

Division and modulo follow C (truncating), which equals floor division on the non-negative values
indices take; the simplifications below rely only on that.  :class:`AffineExpr` views a polynomial
as ``sum(coeff[v] * v) + const`` over chosen index variables, with coefficients that are
polynomials in the symbols (sizes and parameters).  :class:`Cmp` / :class:`Cond` model guards and
:func:`domain_of` turns a conjunction of guards into per-variable bounds.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Union

# --------------------------------------------------------------------------- atoms

DIMS = ("x", "y", "z")
THREAD = tuple(f"threadIdx.{d}" for d in DIMS)
BLOCK = tuple(f"blockIdx.{d}" for d in DIMS)
BDIM = tuple(f"blockDim.{d}" for d in DIMS)
GDIM = tuple(f"gridDim.{d}" for d in DIMS)
GID = tuple(f"gid.{d}" for d in DIMS)
LAUNCH_SIZES = frozenset(BDIM + GDIM)
THREAD_COORDS = frozenset(THREAD + BLOCK + GID)


@dataclass(frozen=True)
class DivAtom:
    """``num / den`` (C truncation, non-negative operands) that did not simplify."""

    num: Poly
    den: Poly

    def __str__(self) -> str:
        return f"({self.num} / {self.den})"


@dataclass(frozen=True)
class ModAtom:
    num: Poly
    den: Poly

    def __str__(self) -> str:
        return f"({self.num} % {self.den})"


@dataclass(frozen=True)
class OpaqueAtom:
    """An integer the analysis cannot see through: ``key`` identifies it, ``payload`` explains it
    (e.g. the symbolic load an embedding index comes from)."""

    key: str
    payload: object = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        return f"<{self.key}>"


Atom = Union[str, DivAtom, ModAtom, OpaqueAtom]
Monomial = tuple  # tuple[Atom, ...], sorted by atom_key, with repetition for powers


_KEYS: dict = {}


def atom_key(a: Atom) -> str:
    if isinstance(a, str):
        return a
    k = _KEYS.get(a)
    if k is None:
        if len(_KEYS) > 100_000:
            _KEYS.clear()
        k = _KEYS[a] = str(a)
    return k


_MONO_KEYS: dict = {}


def _mono_key(m: Monomial) -> tuple:
    """The sort key of a monomial (its degree, then its atoms' keys), computed once per
    monomial: polynomials are sorted on every construction."""
    k = _MONO_KEYS.get(m)
    if k is None:
        if len(_MONO_KEYS) > 100_000:
            _MONO_KEYS.clear()
        k = _MONO_KEYS[m] = (len(m), tuple(atom_key(a) for a in m))
    return k


# --------------------------------------------------------------------------- polynomials


#: work units left to the running analysis (the same list as ``cuda2nki.lift.values.WORK``):
#: every polynomial built costs one unit, so index arithmetic that grows is charged for it
WORK: list = [float("inf")]


class BudgetExceeded(Exception):
    """The analysis spent more than its work units."""


@dataclass(frozen=True)
class Poly:
    """Integer polynomial: a sorted tuple of ``(monomial, coefficient)``; the empty monomial is the
    constant.  Immutable, hashable, structurally canonical (equal polynomials compare equal)."""

    terms: tuple = ()

    # construction ---------------------------------------------------------------------------
    @staticmethod
    def from_dict(d: Mapping[Monomial, int]) -> Poly:
        WORK[0] -= 1
        if WORK[0] < 0:
            raise BudgetExceeded()
        items = [(m, c) for m, c in d.items() if c != 0]
        items.sort(key=lambda mc: _mono_key(mc[0]))
        return _simplify_divmod(Poly(tuple(items)))

    @staticmethod
    def const(c: int) -> Poly:
        return Poly((((), int(c)),)) if c else Poly(())

    @staticmethod
    def atom(a: Atom) -> Poly:
        return Poly((((a,), 1),))

    # inspection -----------------------------------------------------------------------------
    def as_dict(self) -> dict[Monomial, int]:
        return dict(self.terms)

    @property
    def is_const(self) -> bool:
        return all(m == () for m, _ in self.terms)

    @property
    def const_value(self) -> int:
        return dict(self.terms).get((), 0)

    def atoms(self) -> set[Atom]:
        got = self.__dict__.get("_atoms")
        if got is None:
            got = frozenset(self._atoms())
            object.__setattr__(self, "_atoms", got)
        return set(got)

    def _atoms(self) -> set[Atom]:
        out: set[Atom] = set()
        for m, _ in self.terms:
            for a in m:
                out.add(a)
                if isinstance(a, (DivAtom, ModAtom)):
                    out |= a.num.atoms() | a.den.atoms()
        return out

    def top_atoms(self) -> set[Atom]:
        """Atoms appearing directly in monomials (not inside a Div/Mod atom)."""
        return {a for m, _ in self.terms for a in m}

    def depends_on(self, names: Iterable[Atom]) -> bool:
        names = set(names)
        return any(a in names for a in self.atoms())

    # arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: Poly | int) -> Poly:
        other = as_poly(other)
        d = self.as_dict()
        for m, c in other.terms:
            d[m] = d.get(m, 0) + c
        return Poly.from_dict(d)

    __radd__ = __add__

    def __neg__(self) -> Poly:
        return Poly(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Poly | int) -> Poly:
        return self + (-as_poly(other))

    def __rsub__(self, other: Poly | int) -> Poly:
        return as_poly(other) - self

    def __mul__(self, other: Poly | int) -> Poly:
        other = as_poly(other)
        d: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2, key=atom_key))
                d[m] = d.get(m, 0) + c1 * c2
        return Poly.from_dict(d)

    __rmul__ = __mul__

    def __str__(self) -> str:
        return self.text(atom_key, " + ")

    def text(self, atom: Callable[[Atom], str], sep: str) -> str:
        """The terms spelled with ``atom`` for each atom, joined by ``sep`` (a ``+`` between
        blanks or not), a negative term's ``+`` turned into ``-``; ``0`` when there are none."""
        parts = []
        for m, c in self.terms:
            body = "*".join(atom(a) for a in m)
            if not body:
                parts.append(str(c))
            elif c == 1:
                parts.append(body)
            elif c == -1:
                parts.append("-" + body)
            else:
                parts.append(f"{c}*{body}")
        return sep.join(parts).replace(sep + "-", sep.replace("+", "-")) if parts else "0"

    __repr__ = __str__

    # substitution / evaluation -------------------------------------------------------------
    def subs(self, mapping: Mapping[Atom, Poly | int]) -> Poly:
        if not mapping:
            return self
        if (
            "%renorm%" not in mapping
            and self.__dict__.get("_atoms") is not None
            and not (self.__dict__["_atoms"] & mapping.keys())
        ):
            return self
        if "%renorm%" not in mapping and not (self.atoms() & mapping.keys()):
            return self
        mapping = {k: as_poly(v) for k, v in mapping.items()}
        out = Poly.const(0)
        for m, c in self.terms:
            term = Poly.const(c)
            for a in m:
                term = term * _subs_atom(a, mapping)
            out = out + term
        return out

    def evaluate(self, env: Mapping[str, int]) -> int:
        total = 0
        for m, c in self.terms:
            v = c
            for a in m:
                v *= _eval_atom(a, env)
            total += v
        return total


def _subs_atom(a: Atom, mapping: Mapping[Atom, Poly]) -> Poly:
    if a in mapping:
        return mapping[a]
    if isinstance(a, DivAtom):
        return floordiv(a.num.subs(mapping), a.den.subs(mapping))
    if isinstance(a, ModAtom):
        return mod(a.num.subs(mapping), a.den.subs(mapping))
    return Poly.atom(a)


def _eval_atom(a: Atom, env: Mapping[str, int]) -> int:
    if isinstance(a, DivAtom):
        n, d = a.num.evaluate(env), a.den.evaluate(env)
        return c_div(n, d)
    if isinstance(a, ModAtom):
        n, d = a.num.evaluate(env), a.den.evaluate(env)
        return n - c_div(n, d) * d
    if isinstance(a, OpaqueAtom):
        raise KeyError(a.key)
    return int(env[a])


def c_div(n: int, d: int) -> int:
    """C truncating division."""
    if d == 0:
        raise ZeroDivisionError("division by zero in index expression")
    q = abs(n) // abs(d)
    return q if (n >= 0) == (d > 0) else -q


def as_poly(x: Poly | int) -> Poly:
    return x if isinstance(x, Poly) else Poly.const(int(x))


def sym(name: str) -> Poly:
    return Poly.atom(name)


ZERO = Poly(())
ONE = Poly.const(1)

# --------------------------------------------------------------------------- division


def _exact_div(p: Poly, d: Poly) -> Poly | None:
    """``p / d`` when every term of ``p`` is divisible by the single-term ``d``; else None."""
    if len(d.terms) != 1:
        return None
    ((dm, dc),) = d.terms
    if dc == 0:
        return None
    out: dict[Monomial, int] = {}
    for m, c in p.terms:
        if c % dc:
            return None
        rest = list(m)
        for a in dm:
            if a in rest:
                rest.remove(a)
            else:
                return None
        out[tuple(rest)] = out.get(tuple(rest), 0) + c // dc
    return Poly.from_dict(out)


#: known ranges ``0 <= atom < hi`` of index atoms (thread coordinates, loop variables), set by
#: the analysis around the code that needs them (see :func:`bounds`)
_BOUNDS: contextvars.ContextVar[Mapping] = contextvars.ContextVar(
    "c2n_affine_bounds", default=types.MappingProxyType({})
)


@contextlib.contextmanager
def bounds(extra: Mapping[Atom, Poly | int]) -> Iterator[None]:
    """Within the block, ``0 <= atom < hi`` is known for each entry of ``extra``."""
    cur = dict(_BOUNDS.get())
    cur.update({k: as_poly(v) for k, v in extra.items()})
    tok = _BOUNDS.set(cur)
    try:
        yield
    finally:
        _BOUNDS.reset(tok)


def known_bound(a: Atom) -> Poly | None:
    """Exclusive upper bound of a non-negative atom, when known."""
    b = _BOUNDS.get().get(a)
    if b is not None:
        return b
    if isinstance(a, str) and a.startswith("threadIdx."):
        return sym("blockDim." + a[-1])
    if isinstance(a, ModAtom):
        return a.den
    if isinstance(a, DivAtom) and a.den.is_const and a.den.const_value > 0:
        hi = upper(a.num)  # (num / d) <= upper(num) / d
        if hi is not None and hi.is_const:
            return Poly.const(hi.const_value // a.den.const_value + 1)
    return None


def upper(p: Poly) -> Poly | None:
    """An upper bound (inclusive) of ``p`` over the known atom ranges; None if unknown.  Atoms
    without a known bound must appear with non-positive coefficients (they are >= 0)."""
    out = ZERO
    for m, c in p.terms:
        if not m:
            out = out + c
            continue
        if len(m) == 1 and c > 0:
            hi = known_bound(m[0])
            if hi is None:
                return None
            out = out + c * (hi - 1)
        elif c < 0:
            out = out + Poly(((m, c),))  # kept symbolic: cancels against the bounds above
        else:
            # c*a*b with bounds on every atom
            t = Poly.const(c)
            for a in m:
                hi = known_bound(a)
                if hi is None:
                    return None
                t = t * (hi - 1)
            out = out + t
    return out


def lower(p: Poly) -> Poly | None:
    """A lower bound of ``p`` (atoms are >= 0)."""
    return None if upper(-p) is None else -upper(-p)


def provably_neg(p: Poly) -> bool:
    """``p < 0`` for every value of the atoms in their known ranges."""
    u = upper(p)
    if u is None:
        return False
    if u.is_const:
        return u.const_value < 0
    return all(c <= 0 for m, c in u.terms if m) and u.const_value < 0


def provably_nonneg(p: Poly) -> bool:
    return provably_neg(-p - 1)


def _in_range_below(r: Poly, d: Poly) -> bool:
    """Provably ``0 <= r < d`` over the known atom ranges."""
    if r.is_const and d.is_const:
        return 0 <= r.const_value < d.const_value
    return provably_nonneg(r) and provably_neg(r - d)


def _split_divisible(p: Poly, d: Poly) -> tuple[Poly, Poly]:
    """``p = d*q + r`` with ``q`` collecting every term divisible by ``d``."""
    q = {}
    r = {}
    for m, c in p.terms:
        e = _exact_div(Poly(((m, c),)), d)
        if e is not None:
            for mm, cc in e.terms:
                q[mm] = q.get(mm, 0) + cc
        else:
            r[m] = c
    return Poly.from_dict(q), Poly.from_dict(r)


def _shift_const(r: Poly, d: Poly) -> tuple[Poly, Poly] | None:
    """``r = d*k + r'`` with ``k`` taken from ``r``'s constant term and ``0 <= r' < d`` provably:
    ``(k, r')`` (a non-negative remainder whose constant is at least one divisor over)."""
    if not d.is_const or d.const_value <= 0:
        return None
    c = dict(r.terms).get((), 0)
    k = c // d.const_value
    if k == 0:
        return None
    rest = r - k * d.const_value
    if not _in_range_below(rest, d):
        return None
    return Poly.const(k), rest


def _div_by_factor(p: Poly, d: Poly) -> Poly | None:
    """``(c*q + r) / (c*k) = q / k`` for a factor ``c`` of the single-term ``d`` and
    ``0 <= r < c`` (a flat index split by a symbolic row length, then divided again)."""
    if len(d.terms) != 1 or len(d.terms[0][0]) < 2 or d.terms[0][1] != 1:
        return None
    atoms = d.terms[0][0]
    for n in range(1, len(atoms)):
        for pick in itertools.combinations(range(len(atoms)), n):
            c = Poly(((tuple(atoms[i] for i in pick), 1),))
            k = Poly(((tuple(a for i, a in enumerate(atoms) if i not in pick), 1),))
            q, r = _split_divisible(p, c)
            if q.terms and _in_range_below(r, c):
                return floordiv(q, k)
    return None


def floordiv(p: Poly, d: Poly | int) -> Poly:
    d = as_poly(d)
    if d == ONE:
        return p
    if p.is_const and d.is_const and d.const_value != 0:
        return Poly.const(c_div(p.const_value, d.const_value))
    e = _exact_div(p, d)
    if e is not None:
        return e
    q, r = _split_divisible(p, d)
    if _in_range_below(r, d):
        return q
    shifted = _shift_const(r, d)
    if shifted is not None:  # (19 + t) / 18 = 1 for 0 <= t < 17
        return q + shifted[0]
    got = _div_by_factor(p, d)
    if got is not None:
        return got
    if q.terms and r.terms and len(d.terms) == 1:
        # (d*q + r) / d = q + r / d for non-negative values
        return q + Poly.atom(DivAtom(r, d))
    # nested division: (a / b) / c = a / (b*c)
    if len(p.terms) == 1 and p.terms[0][1] == 1 and len(p.terms[0][0]) == 1:
        a = p.terms[0][0][0]
        if isinstance(a, DivAtom):
            return floordiv(a.num, a.den * d)
    return Poly.atom(DivAtom(p, d))


def mod(p: Poly, d: Poly | int) -> Poly:
    d = as_poly(d)
    if d == ONE:
        return ZERO
    if p.is_const and d.is_const and d.const_value != 0:
        n, dv = p.const_value, d.const_value
        return Poly.const(n - c_div(n, dv) * dv)
    if _exact_div(p, d) is not None:
        return ZERO
    q, r = _split_divisible(p, d)
    if _in_range_below(r, d):
        return r
    shifted = _shift_const(r, d)
    if shifted is not None:  # (19 + t) % 18 = 1 + t for 0 <= t < 17
        return shifted[1]
    if q.terms and r.terms:
        return mod(r, d)
    return Poly.atom(ModAtom(p, d))


def _simplify_divmod(p: Poly) -> Poly:
    """``c*m*(a/b)*b + c*m*(a%b)`` -> ``c*m*a`` (the division identity).  ``p``'s terms are
    sorted; without a remainder atom there is nothing to rewrite and ``p`` is returned."""
    if not any(isinstance(a, ModAtom) for m, _ in p.terms for a in m):
        return p
    d = dict(p.terms)
    changed = True
    while changed:
        changed = False
        for m, c in list(d.items()):
            mods = [a for a in m if isinstance(a, ModAtom)]
            for ma in mods:
                den = ma.den
                if len(den.terms) != 1:
                    continue
                ((dm, dc),) = den.terms
                rest = list(m)
                rest.remove(ma)
                q = floordiv(ma.num, den)
                if len(q.terms) != 1 or q.terms[0][1] != 1 or len(q.terms[0][0]) != 1:
                    continue
                partner = tuple(sorted(rest + [q.terms[0][0][0]] + list(dm), key=atom_key))
                if d.get(partner) != c * dc:
                    continue
                del d[m]
                del d[partner]
                repl = Poly.const(c) * ma.num
                for a in rest:
                    repl = repl * Poly.atom(a)
                for mm, cc in repl.terms:
                    d[mm] = d.get(mm, 0) + cc
                d = {k: v for k, v in d.items() if v}
                changed = True
                break
            if changed:
                break
    items = sorted(d.items(), key=lambda mc: _mono_key(mc[0]))
    return Poly(tuple(items))


# --------------------------------------------------------------------------- affine views


@dataclass(frozen=True)
class AffineExpr:
    """``sum(coeffs[v] * v) + const``: coefficients and constant are free of the index vars."""

    coeffs: dict
    const: Poly

    def coeff(self, v: Atom) -> Poly:
        return self.coeffs.get(v, ZERO)

    @property
    def vars(self) -> tuple:
        return tuple(sorted(self.coeffs, key=atom_key))

    def to_poly(self) -> Poly:
        out = self.const
        for v, c in self.coeffs.items():
            out = out + c * Poly.atom(v)
        return out

    def __str__(self) -> str:
        return str(self.to_poly())


def is_index_atom(a: Atom, index_vars: frozenset | set) -> bool:
    if isinstance(a, (DivAtom, ModAtom)):
        return a.num.depends_on(index_vars) or a.den.depends_on(index_vars)
    if isinstance(a, OpaqueAtom):
        return True
    return a in index_vars


def affine(p: Poly, index_vars: Iterable[Atom]) -> AffineExpr | None:
    """View ``p`` as affine in ``index_vars`` (quasi-affine Div/Mod atoms over index vars and
    opaque atoms count as variables themselves); None when some monomial is non-linear in them."""
    iv = frozenset(index_vars)
    coeffs: dict[Atom, Poly] = {}
    const = ZERO
    for m, c in p.terms:
        idx = [a for a in m if is_index_atom(a, iv)]
        if len(idx) > 1:
            return None
        others = list(m)
        if idx:
            others.remove(idx[0])
        rest = Poly.const(c)
        for a in others:
            rest = rest * Poly.atom(a)
        if idx:
            coeffs[idx[0]] = coeffs.get(idx[0], ZERO) + rest
        else:
            const = const + rest
    return AffineExpr({k: v for k, v in coeffs.items() if v != ZERO}, const)


def coefficient(p: Poly, a: Atom) -> Poly:
    """Coefficient of the atom ``a`` in ``p`` (terms linear in ``a``)."""
    out = ZERO
    for m, c in p.terms:
        if m.count(a) == 1:
            rest = list(m)
            rest.remove(a)
            t = Poly.const(c)
            for b in rest:
                t = t * Poly.atom(b)
            out = out + t
    return out


# --------------------------------------------------------------------------- global thread ids


def canonical(p: Poly, block: tuple | None = None) -> Poly:
    """Rewrite ``c*threadIdx.d + c*blockDim.d*blockIdx.d`` as ``c*gid.d`` (any order, any
    spelling: the polynomial is canonical), also inside Div/Mod atoms.  With a concrete ``block``
    (x, y, z) the block size may also appear as its number (``blockIdx.x * 256 + threadIdx.x``)."""
    p = _canon_inner(p, block)
    for k, d in enumerate(DIMS):
        t, b, bd, g = f"threadIdx.{d}", f"blockIdx.{d}", f"blockDim.{d}", f"gid.{d}"
        ct = coefficient(p, t)
        if ct == ZERO:
            continue
        cb = coefficient(p, b)
        if cb != ct * sym(bd) and not (block and cb == ct * block[k]):
            continue
        p = p - ct * sym(t) - cb * sym(b) + ct * sym(g)
    return p


def _canon_inner(p: Poly, block: tuple | None) -> Poly:
    mapping = {}
    for a in p.top_atoms():
        if isinstance(a, DivAtom):
            mapping[a] = floordiv(canonical(a.num, block), canonical(a.den, block))
        elif isinstance(a, ModAtom):
            mapping[a] = mod(canonical(a.num, block), canonical(a.den, block))
    return p.subs(mapping) if mapping else p


def expand_gid(p: Poly) -> Poly:
    """Inverse of :func:`canonical`: ``gid.d`` -> ``blockIdx.d*blockDim.d + threadIdx.d``."""
    return p.subs(
        {
            g: sym(f"blockIdx.{d}") * sym(f"blockDim.{d}") + sym(f"threadIdx.{d}")
            for g, d in zip(GID, DIMS)
        }
    )


def global_dims(p: Poly) -> tuple[str, ...]:
    """The ``gid.d`` atoms ``p`` uses (after :func:`canonical`)."""
    return tuple(g for g in GID if g in canonical(p).atoms())


def total_threads(d: str) -> Poly:
    return sym(f"blockDim.{d}") * sym(f"gridDim.{d}")


@dataclass(frozen=True)
class GridStride:
    """A loop ``for (v = gid.d + off; v < bound; v += blockDim.d*gridDim.d)``: together the threads
    visit every ``v`` in ``[off, bound)`` exactly once."""

    dim: str
    start: Poly
    bound: Poly


def grid_stride(
    start: Poly, step: Poly, bound: Poly | None, block: tuple | None = None
) -> GridStride | None:
    start, step = canonical(start, block), canonical(step, block)
    for k, d in enumerate(DIMS):
        g = f"gid.{d}"
        total = {total_threads(d)} | ({block[k] * sym(f"gridDim.{d}")} if block else set())
        if coefficient(start, g) != ONE or step not in total:
            continue
        off = start - sym(g)
        if off.depends_on(THREAD_COORDS):
            continue
        return GridStride(d, off, bound if bound is not None else ZERO)
    return None


# --------------------------------------------------------------------------- guards


@dataclass(frozen=True)
class Cmp:
    """``poly op 0`` with op one of ``<``, ``==``, ``!=`` (integers: ``a <= b`` is ``a-b-1 < 0``)."""

    poly: Poly
    op: str

    def negate(self) -> Cmp:
        if self.op == "<":
            return Cmp(-self.poly - 1, "<")  # not(p < 0)  <=>  -p - 1 < 0
        return Cmp(self.poly, "!=" if self.op == "==" else "==")

    def __str__(self) -> str:
        return f"{self.poly} {self.op} 0"


def compare(op: str, a: Poly, b: Poly) -> Cmp:
    if op == "<":
        return Cmp(a - b, "<")
    if op == "<=":
        return Cmp(a - b - 1, "<")
    if op == ">":
        return Cmp(b - a, "<")
    if op == ">=":
        return Cmp(b - a - 1, "<")
    if op == "==":
        return Cmp(a - b, "==")
    if op == "!=":
        return Cmp(a - b, "!=")
    raise ValueError(op)


@dataclass(frozen=True)
class Cond:
    """A boolean formula over :class:`Cmp`: ``kind`` is ``and``/``or``/``not``/``cmp``/``true``."""

    kind: str
    args: tuple = ()
    cmp: Cmp | None = None

    @staticmethod
    def of(c: Cmp) -> Cond:
        return Cond("cmp", cmp=c)

    def __and__(self, other: Cond) -> Cond:
        return conj([self, other])

    def negate(self) -> Cond:
        if self.kind == "cmp":
            return Cond.of(self.cmp.negate())
        if self.kind == "true":
            return FALSE
        if self.kind == "false":
            return TRUE
        if self.kind == "and":
            return Cond("or", tuple(a.negate() for a in self.args))
        if self.kind == "or":
            return conj([a.negate() for a in self.args])
        raise ValueError(self.kind)

    def conjuncts(self) -> list[Cmp] | None:
        """Flattened list of comparisons when the formula is a pure conjunction."""
        if self.kind == "true":
            return []
        if self.kind == "cmp":
            return [self.cmp]
        if self.kind == "and":
            out: list[Cmp] = []
            for a in self.args:
                sub = a.conjuncts()
                if sub is None:
                    return None
                out.extend(sub)
            return out
        return None

    def subs(self, mapping: Mapping[Atom, Poly]) -> Cond:
        if self.kind == "cmp":
            return Cond.of(Cmp(self.cmp.poly.subs(mapping), self.cmp.op))
        if self.kind in ("and", "or"):
            return Cond(self.kind, tuple(a.subs(mapping) for a in self.args))
        return self

    def atoms(self) -> set:
        if self.kind == "cmp":
            return self.cmp.poly.atoms()
        return set().union(*(a.atoms() for a in self.args)) if self.args else set()

    def __str__(self) -> str:
        if self.kind == "cmp":
            return str(self.cmp)
        if self.kind in ("true", "false"):
            return self.kind
        return "(" + f" {self.kind} ".join(str(a) for a in self.args) + ")"


TRUE = Cond("true")
FALSE = Cond("false")


def holds(c: Cond, env: Mapping[str, int]) -> bool:
    """``c`` at the concrete values ``env`` (every atom of ``c`` is in ``env``)."""
    if c.kind == "true":
        return True
    if c.kind == "false":
        return False
    if c.kind == "cmp":
        v = c.cmp.poly.evaluate(env)
        return v < 0 if c.cmp.op == "<" else (v == 0) == (c.cmp.op == "==")
    if c.kind == "and":
        return all(holds(a, env) for a in c.args)
    if c.kind == "or":
        return any(holds(a, env) for a in c.args)
    raise ValueError(c.kind)


def conj(conds: Iterable[Cond]) -> Cond:
    flat: list[Cond] = []
    for c in conds:
        if c.kind == "true":
            continue
        if c.kind == "false":
            return FALSE
        if c.kind == "and":
            flat.extend(c.args)
        elif c not in flat:
            flat.append(c)
    if not flat:
        return TRUE
    if len(flat) == 1:
        return flat[0]
    return Cond("and", tuple(flat))


def disj(conds: Iterable[Cond]) -> Cond:
    flat: list[Cond] = []
    for c in conds:
        if c.kind == "true":
            return TRUE
        if c.kind == "false":
            continue
        flat.extend(c.args if c.kind == "or" else [c])
    if not flat:
        return FALSE
    return flat[0] if len(flat) == 1 else Cond("or", tuple(flat))


# --------------------------------------------------------------------------- domains


@dataclass(frozen=True)
class Bound:
    """``lo <= var < hi`` (each a tuple of candidate bounds: the max of ``lo``, the min of ``hi``)."""

    lo: tuple = ()
    hi: tuple = ()


@dataclass
class Domain:
    """Per-variable bounds derived from a conjunction of guards, plus the guards that are not
    simple bounds on one variable (``residual``)."""

    bounds: dict = field(default_factory=dict)
    residual: list = field(default_factory=list)

    def add_lo(self, v: Atom, lo: Poly) -> None:
        b = self.bounds.get(v, Bound())
        if lo not in b.lo:
            self.bounds[v] = Bound(b.lo + (lo,), b.hi)

    def add_hi(self, v: Atom, hi: Poly) -> None:
        b = self.bounds.get(v, Bound())
        if hi not in b.hi:
            self.bounds[v] = Bound(b.lo, b.hi + (hi,))


def domain_of(cond: Cond, index_vars: Iterable[Atom]) -> Domain | None:
    """Bounds on each index variable implied by the conjunction ``cond``; None when ``cond`` is
    not a conjunction.  A comparison ``c*v + rest < 0`` with ``c = ±1`` and ``rest`` free of index
    variables is a bound on ``v``; ``v == e`` pins ``v``; anything else is residual."""
    cmps = cond.conjuncts()
    if cmps is None:
        return None
    iv = frozenset(index_vars)
    dom = Domain()
    for c in cmps:
        c = Cmp(canonical(c.poly), c.op)
        aff = affine(c.poly, iv)
        if aff is None or len(aff.coeffs) != 1 or c.op == "!=":
            dom.residual.append(c)
            continue
        ((v, k),) = aff.coeffs.items()
        if k == ONE:
            rest = aff.const
            if c.op == "<":  # v + rest < 0  ->  v < -rest
                dom.add_hi(v, -rest)
            else:
                dom.add_lo(v, -rest)
                dom.add_hi(v, -rest + 1)
        elif k == -ONE:
            rest = aff.const
            if c.op == "<":  # -v + rest < 0  ->  v >= rest + 1
                dom.add_lo(v, rest + 1)
            else:
                dom.add_lo(v, rest)
                dom.add_hi(v, rest + 1)
        else:
            dom.residual.append(c)
    return dom
