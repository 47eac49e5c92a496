"""``docs/cuda-subset.md``: which CUDA the front end reads and the SIMT interpreter executes.

Derived from the front end's node-kind dispositions (:mod:`cuda2nki.frontend.nodekinds` and the
handler tables of :mod:`cuda2nki.frontend.lower`), its typed intrinsic table
(:mod:`cuda2nki.frontend.intrinsics`) and the interpreter's intrinsic table
(:data:`cuda2nki.simt.intrinsics.TABLE`).
"""

from __future__ import annotations

import inspect
from collections import defaultdict

from cuda2nki.diagnostics import rules

LEVELS = {
    "exact": "bit-faithful to CUDA",
    "ideal": "correctly rounded; a GPU may differ by a few ulp or use a fast approximation",
    "partial": "see the note",
}


def _first_line(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.splitlines()[0].rstrip(".") if doc else ""


def _title(code: str) -> str:
    return rules()[code].title


def constructs() -> list[tuple[str, str, str]]:
    """(tree-sitter node kind, support, note) for every kind with a disposition."""
    from cuda2nki.frontend.lower import EXPR_HANDLERS, STMT_HANDLERS
    from cuda2nki.frontend.nodekinds import PARTLY_SUPPORTED, REJECTED_KINDS

    rows = []
    for kind, fn in STMT_HANDLERS.items():
        ignored = fn.__name__ == "s_ignore"
        rows.append(
            (kind, "ignored" if ignored else "supported (statement)", _first_line(fn) or "")
        )
    for kind, fn in EXPR_HANDLERS.items():
        rows.append((kind, "supported (expression)", _first_line(fn) or ""))
    for kind, code in REJECTED_KINDS.items():
        if kind in PARTLY_SUPPORTED:
            rows.append((kind, "partly supported", PARTLY_SUPPORTED[kind]))
        else:
            rows.append((kind, f"refused, {code}", _title(code)))
    order = {
        "supported (statement)": 0,
        "supported (expression)": 1,
        "partly supported": 2,
        "ignored": 3,
    }
    return sorted(rows, key=lambda r: (order.get(r[1], 3), r[1], r[0]))


def cell(text: str) -> str:
    """A Markdown table cell: pipes escaped, newlines folded."""
    return " ".join(str(text).split()).replace("|", "\\|")


def refused_calls() -> list[tuple[str, str, list[str]]]:
    """(rule id, title, callee names) for the call families the front end refuses."""
    from cuda2nki.frontend import intrinsics as fi

    fams = [
        ("C2N1017", sorted(fi.TENSOR_CORE_FUNCS) + ["wmma::*", "nvcuda::*"]),
        ("C2N1015", sorted(fi.TEXTURE_FUNCS)),
        (
            "C2N1018",
            sorted(fi.ASYNC_FUNCS)
            + ["pipeline::*", "cuda::pipeline_shared_state", "cuda::make_pipeline(group, ...)"],
        ),
        ("C2N1014", sorted(n for n in fi.DEVICE_RUNTIME_FUNCS if "Cooperative" not in n)),
        ("C2N1016", sorted(n for n in fi.DEVICE_RUNTIME_FUNCS if "Cooperative" in n)),
    ]
    return [(code, _title(code), names) for code, names in fams]


def intrinsics() -> list[tuple[str, str, str]]:
    """(name, support, note): the interpreter's table, plus names only the front end types."""
    from cuda2nki.frontend.intrinsics import RULES
    from cuda2nki.simt.intrinsics import TABLE

    rows = [(n, t.level, t.note) for n, t in TABLE.items()]
    for n in RULES:
        if n not in TABLE:
            rows.append(
                (n, "not executed", "typed by the front end; the interpreter refuses it (C2N1505)")
            )
    return sorted(rows, key=lambda r: r[0].lower())


def library_types() -> list[tuple[str, str]]:
    """(spelling, meaning) of the device-library types and the helpers written out as lane
    arithmetic (cuComplex.h), for the generated page."""
    from cuda2nki.frontend.asynccopy import SYNC_OBJECTS
    from cuda2nki.frontend.cucomplex import COMPLEX_HELPERS
    from cuda2nki.frontend.libtypes import LIBRARY_TYPES, rng_state
    from cuda2nki.frontend.typesys import type_str

    def shown(t) -> str:  # noqa: ANN001
        st = rng_state(t)
        return f"{st.name} ({st.width} x uint32)" if st is not None else type_str(t)

    rows = [(n, shown(t)) for n, t in sorted(LIBRARY_TYPES.items())]
    for n, t in sorted(SYNC_OBJECTS.items()):
        what = f"one-word {t.name} object"
        if n == "pipeline_shared_state":
            what = "refused (C2N1018): a pipeline shared by a group"
        rows.append((f"cuda::{n}" if n != "block_tile_memory" else f"cg::{n}", what))
    rows.append(("cuda::aligned_size_t<A>", "uint64 (the size)"))
    rows.append(
        (", ".join(sorted(COMPLEX_HELPERS)), "written out as arithmetic on the .x/.y lanes")
    )
    return rows


def markdown() -> str:
    cons = constructs()
    calls = refused_calls()
    intr = intrinsics()
    counts: dict[str, int] = defaultdict(int)
    for _, level, _ in intr:
        counts[level] += 1
    from cuda2nki.frontend.nodekinds import STRUCTURAL

    out = [
        "# Supported CUDA subset",
        "",
        "What `cuda2nki parse` reads and `cuda2nki run` executes, derived from the front end's "
        "node-kind tables and the interpreter's intrinsic table.  A refused construct rejects "
        "only the kernels that use it (directly or through a device function); the others in "
        "the file are still read.  `cuda2nki rules ID` explains each id.",
        "",
        "## Statements and expressions",
        "",
        "Each tree-sitter-cuda node kind that can appear in device code is handled, ignored or "
        f"refused.  {len(STRUCTURAL)} further kinds (declarators, specifiers, argument lists, "
        "clauses) are read by their parent's handler.",
        "",
        "| construct (node kind) | support | notes |",
        "|---|---|---|",
    ]
    out += [f"| `{k}` | {s} | {cell(n)} |" for k, s, n in cons]
    out += [
        "",
        "## Refused calls",
        "",
        "| id | what | callees |",
        "|---|---|---|",
    ]
    out += [f"| {c} | {t} | {', '.join(f'`{n}`' for n in names)} |" for c, t, names in calls]
    out += [
        "",
        "## Device-library types",
        "",
        "cuComplex/cuFFT numbers are the vector types they are defined as, cuRAND states are "
        "vectors of 32-bit words laid out as the library lays them out (the interpreter runs "
        "the generators), pipelines and barriers are one-word objects whose waits become block "
        "barriers or nothing (see `cuda2nki rules C2N1018` for what stays refused).",
        "",
        "| spelling | typed as |",
        "|---|---|",
    ]
    out += [f"| `{cell(n)}` | {cell(t)} |" for n, t in library_types()]
    out += [
        "",
        "## Intrinsics and library functions",
        "",
        "Levels: "
        + "; ".join(f"**{k}** ({v})" for k, v in LEVELS.items())
        + "; **not executed**: typed by the front end but refused by the interpreter (C2N1505).  "
        "A name in neither table is an unknown function (C2N1021).",
        "",
        "Counts: " + ", ".join(f"{k} {counts[k]}" for k in (*LEVELS, "not executed") if counts[k]),
        "",
        "| name | level | note |",
        "|---|---|---|",
    ]
    out += [f"| `{n}` | {lv} | {cell(note)} |" for n, lv, note in intr]
    return "\n".join(out) + "\n"
