"""``docs/nki-api-coverage.md``: the NKI API the simulator provides, per API generation.

The simulator keeps no table of engines and costs per API, so this module derives them from its
code: the API names from the namespaces :func:`cuda2nki.nkisim.importer.build_modules` installs,
the engine and instruction of each function from the ``record(engine, op, ...)`` calls it makes
(following calls into the simulator's own helpers), the cycle formula per instruction from
:func:`cuda2nki.nkisim.profile.instr_cycles`, and the support level from ``unsupported(...)``
refusals in the function's code.  Cells derived this way are marked as such in the document.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from cuda2nki.docsgen.cuda_subset import cell

ENGINES = ("tensor", "vector", "scalar", "gpsimd", "dma")
MODULES = {
    "current": (
        "nki.language",
        "nki.isa",
        "nki.compiler",
        "nki.compiler.sbuf",
        "nki.compiler.psum",
    ),
    "legacy": (
        "neuronxcc.nki.language",
        "neuronxcc.nki.isa",
        "neuronxcc.nki.compiler",
        "neuronxcc.nki.compiler.sbuf",
        "neuronxcc.nki.compiler.psum",
    ),
}
#: how the document names each namespace (the usual import aliases)
SHORT = {"language": "nl", "isa": "nisa", "compiler": "ncc", "sbuf": "ncc.sbuf", "psum": "ncc.psum"}


@dataclass(frozen=True)
class Derived:
    engines: frozenset[str]
    ops: frozenset[str]
    refusals: tuple[str, ...]  # descriptions passed to unsupported(...)
    always_refused: bool


@cache
def _tree(fn: Callable) -> ast.FunctionDef | None:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    node = ast.parse(src).body[0]
    return node if isinstance(node, ast.FunctionDef) else None


def _strings(node: ast.AST) -> set[str]:
    return {
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _assigned(tree: ast.AST, name: str) -> set[str]:
    """String constants assigned to ``name`` anywhere in ``tree``."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in n.targets
        ):
            out |= _strings(n.value)
    return out


def _callee(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _body_is_refusal(tree: ast.FunctionDef) -> bool:
    """The function ends in ``raise unsupported(...)`` and never returns a value or records."""
    last = tree.body[-1]
    ends_refusing = (
        isinstance(last, ast.Raise)
        and isinstance(last.exc, ast.Call)
        and _callee(last.exc) == "unsupported"
    )
    returns = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(tree))
    records = any(isinstance(n, ast.Call) and _callee(n) == "record" for n in ast.walk(tree))
    return ends_refusing and not returns and not records


def derive(fn: Callable, depth: int = 3) -> Derived:
    tree = _tree(fn)
    if tree is None:
        return Derived(frozenset(), frozenset(), (), False)
    engines: set[str] = set()
    ops: set[str] = set()
    refusals: list[str] = []
    glb = getattr(fn, "__globals__", {})
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = _callee(call)
        if name == "record" and len(call.args) >= 2:
            eng, op = call.args[0], call.args[1]
            if isinstance(eng, ast.Name):
                engines |= _assigned(tree, eng.id) & set(ENGINES)
            else:
                engines |= _strings(eng) & set(ENGINES)
            ops |= _strings(op) if not isinstance(op, ast.Name) else _assigned(tree, op.id)
        elif name == "unsupported":
            refusals.append(ast.unparse(call.args[-1]) if call.args else "")
        elif depth > 0 and name in glb and callable(glb[name]) and name not in ("fail", "error"):
            sub = glb[name]
            module = getattr(sub, "__module__", None) or ""  # builtins bound to a name: None
            if module.startswith("cuda2nki.nkisim") and sub is not fn:
                d = derive(sub, depth - 1)
                engines |= d.engines
                ops |= d.ops
    for n in ast.walk(tree):  # engine_name(engine, "vector") defaults
        if isinstance(n, ast.Call) and _callee(n) == "engine_name" and len(n.args) > 1:
            engines |= _strings(n.args[1]) & set(ENGINES)
    ops = {o for o in ops if o.isidentifier() and o not in ENGINES}
    return Derived(frozenset(engines), frozenset(ops), tuple(refusals), _body_is_refusal(tree))


def cost_formulas() -> dict[str, str]:
    """Instruction -> cycle formula, read from :func:`cuda2nki.nkisim.profile.instr_cycles`."""
    from cuda2nki.nkisim import profile

    tree = _tree(profile.instr_cycles)
    out: dict[str, str] = {}
    assert tree is not None
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        names: set[str] = set()
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "op"
        ):
            names = _strings(test.comparators[0])
        ret = next((s for s in node.body if isinstance(s, ast.Return)), None)
        if names and ret is not None and ret.value is not None:
            text = _readable(ast.unparse(ret.value))
            for nm in names:
                out.setdefault(nm, text)
    fallback = ast.unparse(tree.body[-1].value) if isinstance(tree.body[-1], ast.Return) else ""
    out["*"] = _readable(fallback)
    return out


#: helper calls in the cost model, spelled out (from :func:`cuda2nki.nkisim.profile._mm_cycles`)
_HELPERS = {
    "_mm_cycles(ex) if ex else ": "max(min(64, stationary free), moving free), x4 for fp32 "
    "operands, /2 in double-row mode; without operand data ",
    "extra_reduce": "(64 if it also reduces else 0)",
}


def _readable(text: str) -> str:
    text = text.replace("float(", "(").replace("MIN_II", "64")
    for k, v in _HELPERS.items():
        text = text.replace(k, v)
    return text


def _public_api(module) -> dict[str, object]:
    return {
        k: v
        for k, v in vars(module).items()
        if not k.startswith("_")
        and callable(v)
        and not isinstance(v, type)
        and getattr(v, "__module__", "").startswith("cuda2nki.nkisim")
    }


def _level(d: Derived) -> str:
    if d.always_refused:
        return "not supported"
    return "partial" if d.refusals else "implemented"


def rows() -> list[dict[str, str]]:
    from cuda2nki.nkisim.importer import build_modules

    mods = build_modules()
    costs = cost_formulas()
    names: dict[str, dict[str, object]] = {}
    for gen, modnames in MODULES.items():
        for modname in modnames:
            short = SHORT[modname.rsplit(".", 1)[-1]]
            for k, fn in _public_api(mods[modname]).items():
                names.setdefault(f"{short}.{k}", {})[gen] = fn
    out = []
    for api, gens in sorted(names.items()):
        fn = gens.get("current") or gens.get("legacy")
        d = derive(fn)  # type: ignore[arg-type]
        # a generation whose own function always refuses says so; otherwise the level of the
        # (shared) implementation, which the legacy wrappers call
        levels = {
            g: "not supported" if derive(f).always_refused else _level(d)  # type: ignore[arg-type]
            for g, f in gens.items()
        }
        refusals = set(d.refusals)
        for g, f in gens.items():
            if levels[g] != "implemented":
                refusals |= set(derive(f).refusals)  # type: ignore[arg-type]
        refused = "; ".join(sorted({r.strip("'\"") for r in refusals if r}))
        formula = "; ".join(
            f"{op}: {costs.get(op, costs['*'])}" for op in sorted(d.ops) if op != "dma_copy"
        )
        if "dma" in d.engines:
            formula = "; ".join(x for x in (formula, "DMA: 600 ns + bytes / bandwidth") if x)
        out.append(
            {
                "api": api,
                "current": levels.get("current", "absent"),
                "legacy": levels.get("legacy", "absent"),
                "engine": ", ".join(sorted(d.engines)) or "none (no instruction)",
                "cycles": formula,
                "notes": refused,
            }
        )
    return sorted(out + _refused_rows(set(names)), key=lambda r: r["api"])


def _refused_rows(provided: set[str]) -> list[dict[str, str]]:
    """Documented APIs the simulator refuses by name (C2N3001 with the reason shown)."""
    from cuda2nki.nkisim.importer import NOT_SIMULATED
    from cuda2nki.nkisim.library_kernels import PREFIX as LIBRARY
    from cuda2nki.nkisim.library_kernels import documented_apis
    from cuda2nki.nkisim.tensor import _TENSOR_NOT_SIMULATED

    short = {"isa": "nisa", "language": "nl", "collectives": "nki.collectives"}
    found = {f"{short[k.split('.')[0]]}.{k.split('.', 1)[1]}": v for k, v in NOT_SIMULATED.items()}
    found |= {f"NkiTensor.{k}": v for k, v in _TENSOR_NOT_SIMULATED.items()}
    found |= documented_apis()
    return [
        {
            "api": api,
            # neuronxcc.nki.kernels is a namespace of the legacy API only
            "current": "absent" if api.startswith(LIBRARY) else "not supported",
            # nki.collectives is a namespace of the current API only
            "legacy": "absent" if api.startswith("nki.collectives.") else "not supported",
            "engine": "none (refused)",
            "cycles": "",
            "notes": reason,
        }
        for api, reason in found.items()
        if api not in provided
    ]


def markdown() -> str:
    table = rows()
    levels = ("implemented", "partial", "not supported", "absent")
    count = {
        gen: {lv: sum(r[gen] == lv for r in table) for lv in levels}
        for gen in ("current", "legacy")
    }
    out = [
        "# NKI API coverage of the simulator",
        "",
        "`cuda2nki simulate` runs NKI kernels written against either API generation: the current "
        "`nki` package (`import nki.language as nl`, `import nki.isa as nisa`, `import nki.compiler as ncc`) and the legacy "
        "`neuronxcc.nki` package.  Any name not listed here is refused where it is used "
        "(C2N3001).",
        "",
        "Columns: **current** / **legacy** -- *implemented*, *partial* (some arguments or modes "
        "are refused with C2N3001; the refusals are listed in the notes), *not supported* "
        "(the name exists but always refuses), *absent* (not in that generation).  "
        "**engine** and **cycles** are *derived* from the simulator's code (the engines named "
        "in the instructions it records, and the cost model's formula for each instruction, "
        "with `n` = elements per partition); `nl` functions issue the `nisa` instruction "
        "shown.  Cycles become time at the target's engine clock; DMA bandwidth is "
        "min(ceil(partitions / 8), 16) DMA engines times the per-engine bandwidth.  Names such "
        "as `fast` and `bf16` in a formula are the conditions `cuda2nki.nkisim.profile` "
        "tests.",
        "",
        "| generation | implemented | partial | not supported | absent |",
        "|---|---|---|---|---|",
    ]
    for gen in ("current", "legacy"):
        c = count[gen]
        out.append(
            f"| {gen} | {c['implemented']} | {c['partial']} | {c['not supported']} | "
            f"{c['absent']} |"
        )
    out += [
        "",
        "| API | current | legacy | engine (derived) | cycles (derived) | notes |",
        "|---|---|---|---|---|---|",
    ]
    for r in table:
        out.append(
            f"| `{r['api']}` | {r['current']} | {r['legacy']} | {r['engine']} | "
            f"{cell(r['cycles'])} | {cell(r['notes'])} |"
        )
    return "\n".join(out + _names_section({r["api"] for r in table})) + "\n"


def _names_section(functions: set[str]) -> list[str]:
    """The public names that are not instructions (:mod:`cuda2nki.docsgen.nki_names`)."""
    from cuda2nki.docsgen.nki_names import rows as name_rows

    table = name_rows(functions)
    out = [
        "",
        "## Other public names",
        "",
        "Entry points, dtypes, memory regions, enums, classes and constants of each namespace "
        "(`nki.isa` enums are also `nki.isa.constants`).  None of them issues an instruction.",
        "",
        "| name | current | legacy | kind | notes |",
        "|---|---|---|---|---|",
    ]
    for r in table:
        out.append(
            f"| `{r['api']}` | {r['current']} | {r['legacy']} | {r['kind']} | {cell(r['notes'])} |"
        )
    return out
