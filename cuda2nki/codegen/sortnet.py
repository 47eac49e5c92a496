"""Spell a recognised sorting network (:mod:`cuda2nki.lift.sortnet_match`) as an NKI module.

Layout: one segment (one CUDA block's shared array) per partition, its keys along the free
dimension, up to 128 segments per tile, so the whole tile loads with one DMA per array and stores
with one.  Each stage of the network is, per box of comparators, one comparison of the low and the
high ends (two strided views of the tile) into a swap mask and three copies per array (the low end
aside, then the two predicated copies) -- bit-exact moves, so integer keys stay exact and float
keys move with their bits (NaN payloads and the sign of zero included).  The module is
``templates/nki/sortnet_module.py.j2``; only the ``nki`` target has this form.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cuda2nki.codegen.render import environment
from cuda2nki.codegen.spell import py_name
from cuda2nki.diagnostics import Diagnostic, make
from cuda2nki.lift.sortnet_boxes import Box
from cuda2nki.lift.sortnet_match import SortNetwork, recognise

TARGETS = ("nki",)


def _pattern(dims: list[tuple[int, int]]) -> str:
    return "[" + ", ".join(f"[{s}, {c}]" for s, c in dims) + "]"


def _dense(box: Box) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    stride = 1
    for _, _, c in reversed(box.dims):
        out.append((stride, c))
        stride *= c
    return list(reversed(out))


def _row(net: SortNetwork, box: Box) -> str:
    pred = net.up if box.up else net.down
    low = _pattern([(ls, c) for ls, _, c in box.dims])
    high = _pattern([(hs, c) for _, hs, c in box.dims])
    return (
        f"({box.lo}, {box.hi}, {low}, {high}, {_pattern(_dense(box))}, nl.{pred.op}, {pred.negate})"
    )


def _arrays(net: SortNetwork, binding: Any) -> list[tuple[str, str, str]]:
    """(input parameter, output name, tile prefix) of the keys, then of each value array."""
    roles = {t.name: t.role for t in binding.tensors}
    out = []
    for i, (src, dst) in enumerate((net.keys, *net.values)):
        name = py_name(dst) + ("_io" if roles[dst] == "inout" else "")
        out.append((py_name(src), name, "_keys" if i == 0 else f"_vals{i}"))
    return out


#: the C integer helpers a grid expression may use (cuda2nki.lift.literal.lower.c_expr_to_py)
_HELPERS = {
    "_c2n_idiv": (
        "def _c2n_idiv(a, b):",
        '    """C integer division: truncates toward zero."""',
        "    q = abs(a) // abs(b)",
        "    return q if (a >= 0) == (b >= 0) else -q",
    ),
    "_c2n_imod": (
        "def _c2n_imod(a, b):",
        '    """C integer remainder: takes the sign of the dividend."""',
        "    return a - b * _c2n_idiv(a, b)",
    ),
    "_c2n_ceil_div": ("def _c2n_ceil_div(a, b):", "    return -(-a // b)"),
}


def _derived(binding: Any) -> dict[str, str]:
    """Scalar -> the input shape entry it is read from (``n`` of a tensor of shape ``[n]``)."""
    out: dict[str, str] = {}
    for t in binding.tensors:
        if t.role not in ("in", "inout"):
            continue
        for d, ext in enumerate(t.shape):
            if isinstance(ext, str) and ext.isidentifier() and ext not in out:
                out[ext] = f"{py_name(t.name)}.shape[{d}]"
    return out


def _params(binding: Any) -> str:
    inputs = [t for t in binding.tensors if t.role in ("in", "inout")]
    sizes = _derived(binding)
    keywords = [f"{py_name(s.name)}={s.value!r}" for s in binding.scalars if s.name not in sizes]
    return ", ".join([py_name(t.name) for t in inputs] + keywords)


def _segments(binding: Any) -> tuple[str, list[str]] | None:
    """The number of CUDA blocks as Python (C integer semantics) and the helpers it needs;
    None where the grid needs more than those helpers."""
    import re

    from cuda2nki.lift.literal.lower import c_expr_to_py

    try:
        dims = [c_expr_to_py(str(g)) for g in binding.grid]
    except (SyntaxError, ValueError):
        return None
    text = " * ".join(d if len(dims) == 1 else f"({d})" for d in dims)
    used = set(re.findall(r"_c2n_\w+", text))
    if "_c2n_imod" in used:
        used.add("_c2n_idiv")
    if not used <= set(_HELPERS):
        return None
    lines = [line for name in _HELPERS if name in used for line in (*_HELPERS[name], "", "")]
    return text, lines


def generate(net: SortNetwork, binding: Any, header: list[str]) -> str | None:
    """The module's source, or None where the grid cannot be spelled."""
    arrays = _arrays(net, binding)
    grid = _segments(binding)
    if grid is None:
        return None
    roles = {py_name(t.name): t.role for t in binding.tensors}
    outputs = [
        f"{dst} = nl.ndarray({src}.shape, dtype={src}.dtype, buffer=nl.shared_hbm)"
        for src, dst, _ in arrays
    ]
    order = {py_name(t.name): i for i, t in enumerate(binding.tensors)}
    returns = sorted(arrays, key=lambda a: order.get(a[1].removesuffix("_io"), 0))
    tables = [{"name": "_BOXES", "comment": [], "rows": _rows(net)}]
    if net.odd is not None:
        tables[0]["comment"] = [f"even-numbered segments: {_describe(net)}"]
        tables.append(
            {
                "name": "_BOXES_ODD",
                "comment": [f"odd-numbered segments: {describe(net.odd)}"],
                "rows": _rows(net.odd),
            }
        )
    return (
        environment()
        .get_template("nki/sortnet_module.py.j2")
        .render(
            header=header,
            n=net.n,
            group=_group(net, binding) if net.odd is None else 1,
            tables=tables,
            calls=_ALTERNATE if net.odd is not None else _CALLS,
            name=py_name(net.kernel),
            params=_params(binding),
            outputs=outputs,
            pairs="".join(f"({src}, {dst}), " for src, dst, _ in arrays).rstrip(" "),
            returns=", ".join(a[1] for a in returns),
            helpers=grid[1],
            segments=grid[0],
            sizes=[f"{py_name(k)} = {v}" for k, v in _derived(binding).items()],
            tails=[
                f"_tail({dst}, {src if roles.get(src) == 'inout' else None}, _segments * _N)"
                for src, dst, _ in arrays
            ],
        )
    )


#: the sorting of every segment: groups of segments per partition, then the ones left over
_CALLS = (
    "_group = max(1, min(_GROUP, _segments // _P))  # segments per partition",
    "_whole = _segments // _group * _group",
    "_sort(_pairs, _BOXES, 0, _whole, _group, 1)",
    "_sort(_pairs, _BOXES, _whole, _segments - _whole, 1, 1)  # what a last group leaves",
)
#: even- and odd-numbered segments, each with its own network
_ALTERNATE = (
    "_sort(_pairs, _BOXES, 0, (_segments + 1) // 2, 1, 2)",
    "_sort(_pairs, _BOXES_ODD, 1, _segments // 2, 1, 2)",
)


def _rows(net: SortNetwork) -> list[str]:
    return [_row(net, b) for stage in net.stages for b in stage]


#: bytes of one partition row of a DMA worth moving (NKI.md: >= 512 B per partition row)
_ROW_BYTES = 512


def _group(net: SortNetwork, binding: Any) -> int:
    """Segments one partition may hold: enough for rows of about 512 B."""
    size = binding.tensor(net.keys[0]).np_dtype.itemsize
    return max(1, _ROW_BYTES // (net.n * size))


def describe(net: SortNetwork) -> str:
    if net.odd is not None:
        return f"{_describe(net)}; odd-numbered blocks: {_describe(net.odd)}"
    return _describe(net)


def _describe(net: SortNetwork) -> str:
    order = "ascending" if net.ascending else "descending"
    kind = "key-value" if net.values else "key-only"
    chunks = f"{net.n} keys per block" if net.m == net.n else f"{net.m}-key chunks of {net.n}"
    return f"sort ({net.family} network, {order}, {kind}, {chunks})"


def port_network(
    path: Any, tu: Any, name: str, binding: Any, target: str, header: list[str]
) -> tuple[str, list[Diagnostic], str] | None:
    """The port of a kernel that runs a sorting network: (source, diagnostics, idiom), or None
    where the kernel is not one (or the target has no such form)."""
    if target not in TARGETS or binding is None:
        return None
    net = recognise(tu, name, binding)
    if net is None:
        return None
    idiom = describe(net)
    lines = [*header, f"Idiom: {idiom}"]
    lines.append(
        f"{len(net.stages)} stages of compare-exchange over {net.n}-key segments, one segment "
        f"per partition (from {Path(str(path)).name}:{net.loc.line})."
    )
    src = generate(net, binding, lines)
    if src is None:
        return None
    return src, [make("C2N2001", net.loc, kernel=name, idiom=idiom)], "sort"
