"""``cuda2nki check`` on the corpus's hand-written ports: correct ones pass clean, flawed ones are caught.

Each port's module docstring carries an ``EXPECT:`` line, e.g.
``EXPECT: defect:tiles C2N4008 (needs M > 128)`` or ``EXPECT: pass; C2N5002 (no tensor engine)``:
parts separated by ``;`` (parenthesised comments dropped); a part lists ids that must all be
reported, or alternatives joined by ``or``; ``defect:KIND`` / ``precision`` name the expected
numerical classification, ``pass`` says the numbers must match.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check

ROOT = Path(__file__).resolve().parents[2]
PORTS = sorted(ROOT.glob("corpus/*/ports/*.py"))
ID = re.compile(r"C2N\d{4}")


def _expect(port: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(port.read_text())) or ""
    m = re.search(r"EXPECT:\s*(.+)", doc)
    return m.group(1).strip() if m else None


def _cuda_for(port: Path) -> Path:
    stem = port.stem.split("_port")[0].split("_flaw_")[0].removesuffix("_legacy")
    return port.parent.parent / f"{stem}.cu"


def _detection_table() -> dict[str, str]:
    """The flawed-port table of docs/guide/reviewing.md: corpus-relative port path -> caught as."""
    rows = {}
    text = (ROOT / "docs/guide/reviewing.md").read_text()
    for m in re.finditer(
        r"^\|[^|\n]+\|\s*`([^`]+_flaw_[^`]+\.py)`\s*\|([^|\n]+)\|\s*$", text, re.M
    ):
        rows[m.group(1)] = re.sub(r"\([^)]*\)", "", m.group(2)).strip()
    return rows


DETECTION = _detection_table()

#: the mechanisms a flawed port must be explained by, each pinned by at least one port below
MECHANISMS = (
    "single loop iteration",
    "stale accumulator",
    "wrong reduction axis",
    "transposed operand",
    "changed constant",
    "eps misplaced",
    "one-partition layout",
    "loop-invariant reload",
    "whole-row gather",
    "vector-engine matmul",
)

#: flawed port -> (mechanism, finding id, text on the flawed port line, what the finding says)
SITES: dict[str, tuple[str, str, str, str]] = {
    "norm/ports/softmax_naive_flaw_ragged_path.py": (
        "single loop iteration",
        "C2N4004",
        "operand0=row_sum",
        "root cause: wrong output at a single loop iteration",
    ),
    "linalg/ports/matmul_tiled_flaw_stale_psum.py": (
        "stale accumulator",
        "C2N4008",
        "nisa.nc_matmul(",
        "root cause: stale accumulator",
    ),
    "reduce/ports/column_sum_flaw_stale_psum_legacy.py": (
        "stale accumulator",
        "C2N4008",
        "acc += nl.matmul(ones[i_r, 0]",
        "root cause: stale accumulator",
    ),
    "reduce/ports/column_sum_flaw_wrong_axis.py": (
        "wrong reduction axis",
        "C2N4001",
        "tensor_reduce",
        "root cause: wrong reduction axis",
    ),
    "norm/ports/softmax_naive_flaw_wrong_axis.py": (
        "wrong reduction axis",
        "C2N4001",
        "src=input.ap(pattern=[[1, cols], [C, N]]",
        "root cause: wrong reduction axis",
    ),
    "linalg/ports/matmul_bias_nullable_flaw_untransposed_weight.py": (
        "transposed operand",
        "C2N4001",
        "src=weight[k : k + kk, :]",
        "root cause: transposed operand",
    ),
    "activation/ports/gelu_tanh_flaw_changed_constant.py": (
        "changed constant",
        "C2N4001",
        "operand0=0.04715",
        "root cause: changed constant",
    ),
    "activation/ports/gelu_scaling_expr_flaw_missing_sqrt.py": (
        "changed constant",
        "C2N4001",
        "SQRT_2_OVER_PI = 2.0 / math.pi",
        "root cause: changed constant",
    ),
    "activation/ports/gelu_scaling_expr_flaw_sqrt_2pi_legacy.py": (
        "changed constant",
        "C2N4001",
        "GELU_SCALE = math.sqrt(2.0 * math.pi)",
        "root cause: changed constant",
    ),
    "norm/ports/layernorm_flaw_eps_outside_sqrt.py": (
        "eps misplaced",
        "C2N4001",
        "operand0=eps)",
        "root cause: eps misplaced",
    ),
    "norm/ports/rmsnorm_flaw_eps_outside_sqrt.py": (
        "eps misplaced",
        "C2N4001",
        "data2=eps_t",
        "root cause: eps misplaced",
    ),
    "norm/ports/layernorm_flaw_eps_on_mean.py": (
        "eps misplaced",
        "C2N4001",
        "operand0=eps",
        "root cause: eps misplaced",
    ),
    "norm/ports/rmsnorm_flaw_eps_squared_legacy.py": (
        "eps misplaced",
        "C2N4001",
        "rstd = nl.rsqrt(",
        "root cause: eps misplaced",
    ),
    "activation/ports/gelu_tanh_flaw_one_partition.py": (
        "one-partition layout",
        "C2N5008",
        "op=nl.gelu_apprx_tanh",
        "of 128 partitions",
    ),
    "norm/ports/layernorm_flaw_reload_weights.py": (
        "loop-invariant reload",
        "C2N5006",
        "src=weight.ap(",
        "the loop around it does not change what it reads",
    ),
    "norm/ports/softmax_naive_flaw_reload_inner.py": (
        "loop-invariant reload",
        "C2N5006",
        "dst=x1, src=input[",
        "loads read only",
    ),
    "misc/ports/nll_gather_flaw_whole_rows.py": (
        "whole-row gather",
        "C2N5014",
        "src=rows_hbm[",
        "bytes the computation needs",
    ),
    "linalg/ports/matmul_tiled_flaw_vector_engine.py": (
        "vector-engine matmul",
        "C2N5002",
        "nisa.scalar_tensor_tensor(",
        "without the tensor engine",
    ),
    "linalg/ports/matmul_bias_nullable_flaw_vector_engine.py": (
        "vector-engine matmul",
        "C2N5002",
        "data2=w_row[",
        "without the tensor engine",
    ),
    "reduce/ports/column_sum_flaw_wrong_axis_legacy.py": (
        "wrong reduction axis",
        "C2N4001",
        "s_t = nl.sum(x_t, axis=1",
        "root cause: wrong reduction axis",
    ),
    "linalg/ports/matmul_bias_nullable_flaw_untransposed_weight_legacy.py": (
        "transposed operand",
        "C2N4001",
        "w_t[i_p, i_n] = nl.load(weight[",
        "root cause: transposed operand",
    ),
    "norm/ports/softmax_naive_flaw_ragged_path_legacy.py": (
        "single loop iteration",
        "C2N4004",
        "y = nl.multiply(e, s",
        "root cause: wrong output at a single loop iteration",
    ),
    "activation/ports/gelu_tanh_flaw_one_partition_legacy.py": (
        "one-partition layout",
        "C2N5008",
        "y_t = nl.gelu_apprx_tanh(",
        "of 128 partitions",
    ),
    "norm/ports/rmsnorm_flaw_reload_weight_legacy.py": (
        "loop-invariant reload",
        "C2N5006",
        "w_t = nl.load(w[i_f])",
        "the loop around it does not change what it reads",
    ),
    "misc/ports/nll_gather_flaw_whole_rows_legacy.py": (
        "whole-row gather",
        "C2N5014",
        "rows = nl.load(probs[",
        "bytes the computation needs",
    ),
    "linalg/ports/matmul_tiled_flaw_vector_engine_legacy.py": (
        "vector-engine matmul",
        "C2N5002",
        "acc = nl.add(acc, nl.multiply(",
        "without the tensor engine",
    ),
}


def test_every_mechanism_is_pinned_by_a_flawed_port() -> None:
    assert {m for m, *_ in SITES.values()} == set(MECHANISMS)
    assert set(SITES) <= set(DETECTION)
    legacy = {m for port, (m, *_) in SITES.items() if port.endswith("_legacy.py")}
    assert legacy == set(MECHANISMS)  # each in the legacy (neuronxcc.nki) API too


def _flawed_lines(port: Path, text: str) -> set[int]:
    """The code line holding ``text`` and the first line of its statement (a call may span
    lines: a finding may name either)."""
    src = port.read_text()
    tree = ast.parse(src)
    doc = tree.body[0].end_lineno or 0 if ast.get_docstring(tree) else 0
    at = next(i for i, ln in enumerate(src.splitlines(), 1) if text in ln and i > doc)
    stmts = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.stmt) and not hasattr(n, "body") and n.lineno <= at
    ]
    inside = [n.lineno for n in stmts if (n.end_lineno or n.lineno) >= at]
    return {at, max(inside, default=at)}


def test_detection_table_lists_every_flawed_port() -> None:
    flawed = {p.relative_to(ROOT / "corpus").as_posix() for p in PORTS if _expect(p) is not None}
    assert set(DETECTION) == flawed


def _parts(expect: str) -> list[str]:
    return [p.strip() for p in re.sub(r"\([^)]*\)", "", expect).split(";") if p.strip()]


@pytest.mark.parametrize("port", [p for p in PORTS if _expect(p) is None], ids=lambda p: p.stem)
def test_correct_port_passes_clean(port: Path) -> None:
    rep = check(_cuda_for(port), port, seeds=2)
    d = rep.to_dict()
    above_note = [f for f in d["findings"] if f["severity"] != "note"]
    assert rep.verdict == "pass", (
        above_note,
        [n for n in d["numerics"] if n["classification"] != "expected"],
    )
    assert not above_note


@pytest.mark.parametrize("port", [p for p in PORTS if _expect(p) is not None], ids=lambda p: p.stem)
def test_flawed_port_is_caught(port: Path) -> None:
    expect = _expect(port)
    assert expect
    rep = check(_cuda_for(port), port, seeds=2)
    assert rep.verdict == "fail"
    found = {f.code for f in rep.findings}
    classes = {(n["classification"], n.get("defect")) for n in rep.numerics}
    parts = _parts(expect)
    # "X; Y otherwise": Y is an alternative to X (it depends on the shapes checked)
    groups: list[list[str]] = []
    for part in parts:
        if part.endswith("otherwise") and groups:
            groups[-1].append(part)
        else:
            groups.append([part])
    for alternatives in groups:
        assert any(_holds(p, found, classes) for p in alternatives), (alternatives, found, classes)
    caught = DETECTION.get(port.relative_to(ROOT / "corpus").as_posix())
    assert caught and _holds(caught, found, classes), (caught, found, classes)
    site = SITES.get(port.relative_to(ROOT / "corpus").as_posix())
    if site is not None:  # the finding lands on the flawed line and names the mechanism
        _, code, marker, says = site
        lines = _flawed_lines(port, marker)
        on_line = [f for f in rep.findings if f.code == code and f.loc.line in lines]
        assert on_line, (lines, [(f.code, f.loc.line) for f in rep.findings])
        told = [" ".join([f.message, *map(str, f.notes)]) for f in on_line]
        assert any(says in t for t in told), told


def _holds(part: str, found: set[str], classes: set[tuple[str, str | None]]) -> bool:
    head = part.split()[0]
    ids = ID.findall(part)
    ok = bool(found & set(ids)) if " or " in part else set(ids) <= found
    if head.startswith("defect"):
        kind = head.partition(":")[2]
        ok = ok and any(c == "defect" and (not kind or d == kind) for c, d in classes)
    elif head == "precision":  # precision loss, and nothing worse than it
        ok = ok and ("precision", None) in classes
        ok = ok and all(c in ("precision", "expected") for c, _ in classes)
    elif head == "pass":
        ok = ok and all(c == "expected" for c, _ in classes)
    return ok
