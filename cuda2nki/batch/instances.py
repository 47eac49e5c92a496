"""A migration counts kernels as source definitions: the instantiations of one template kernel
(``tile<64>``, ``tile<128>``) are ported and checked one by one, then reported as one record of
the definition that lists them.

The definition's record takes the least favourable outcome of its instantiations (a template
whose ``tile<128>`` is refused is not an automatic port), its verdict the worst verdict (it is
validated only when every checked instantiation passes), and the union of their diagnostics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cuda2nki.batch.job import BUCKETS

#: verdicts from best to worst; one not listed counts as a failure
VERDICTS = ("pass", "unverified", "fail", "error")
#: what each instantiation keeps in the definition's list
INSTANCE_FIELDS = ("kernel", "status", "port", "verdict", "numerics", "check_ids")


def definition(kernel: str) -> str:
    """The source definition an instantiation's name belongs to (``tile<64, float>``: ``tile``)."""
    return kernel.split("<", 1)[0].strip() if kernel else kernel


def by_definition(
    records: Sequence[dict[str, Any]], seconds: dict[str, float] | None = None
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """``records`` of one file with the instantiations of each template kernel merged into the
    record of its definition (in the order each definition first comes), and the seconds of
    each kernel added up the same way."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["file"], definition(r["kernel"])), []).append(r)
    merged = [_merge(name, recs) for (_, name), recs in groups.items()]
    secs: dict[str, float] = {}
    for k, v in (seconds or {}).items():
        secs[definition(k)] = secs.get(definition(k), 0.0) + v
    return merged, secs


def _merge(name: str, recs: list[dict[str, Any]]) -> dict[str, Any]:
    if len(recs) == 1 and recs[0]["kernel"] == name:
        return recs[0]
    out = {**max(recs, key=lambda r: _bucket(r["status"])), "kernel": name}
    checked = [r for r in recs if r.get("verdict") is not None]
    if checked:  # the worst verdict, with its numerics and cost
        worst = max(checked, key=lambda r: _verdict(r["verdict"]))
        out.update({k: worst.get(k) for k in ("verdict", "numerics", "cost_us")})
    out["port"] = next((r["port"] for r in recs if r.get("port")), None)
    out["idiom"] = next((r["idiom"] for r in recs if r.get("idiom")), None)
    out["binding"] = next((r["binding"] for r in recs if r.get("binding")), None)
    out["lines"] = max(r.get("lines", 0) for r in recs)
    out["diagnostics"] = _union(d for r in recs for d in r["diagnostics"])
    out["blocking"] = sorted({c for r in recs for c in r.get("blocking", [])})
    out["missing"] = list(dict.fromkeys(m for r in recs for m in r.get("missing", [])))
    if any("check_ids" in r for r in recs):
        out["check_ids"] = sorted({c for r in recs for c in r.get("check_ids", [])})
    out["instantiations"] = [
        {f: r[f] for f in INSTANCE_FIELDS if r.get(f) is not None} for r in recs
    ]
    return out


def _bucket(status: str) -> int:
    return BUCKETS.index(status) if status in BUCKETS else -1  # "none": no kernel


def _verdict(v: str) -> int:
    return VERDICTS.index(v) if v in VERDICTS else VERDICTS.index("fail")


def _union(diags: Any) -> list[dict[str, Any]]:
    out: dict[tuple, dict[str, Any]] = {}
    for d in diags:
        out.setdefault((d["id"], d["line"], d["col"], d["message"]), d)
    return list(out.values())
