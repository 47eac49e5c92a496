"""Wrong outputs are reported on the port line that made them, with the loop iteration and the
mechanism the values support; precision loss only where the port narrows a dtype."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity import rootcause
from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.check_judge import narrowing

ROOT = Path(__file__).resolve().parents[2]


def _line(port: Path, text: str) -> int:
    return next(i for i, ln in enumerate(port.read_text().splitlines(), 1) if text in ln)


def _run(suite: str, stem: str, flaw: str):
    port = ROOT / f"corpus/{suite}/ports/{stem}_flaw_{flaw}.py"
    return port, check(ROOT / f"corpus/{suite}/{stem}.cu", port, seeds=1)


@pytest.mark.parametrize(
    ("suite", "stem", "flaw", "code", "marker", "mechanism"),
    [
        ("linalg", "matmul_tiled", "stale_psum", "C2N4008", "nisa.nc_matmul(", "stale accumulator"),
        ("reduce", "column_sum", "wrong_axis", "C2N4001", "tensor_reduce", "wrong reduction axis"),
        (
            "norm",
            "softmax_naive",
            "ragged_path",
            "C2N4004",
            "operand0=row_sum",
            "single loop iteration",
        ),
        (
            "activation",
            "gelu_tanh",
            "changed_constant",
            "C2N4001",
            "operand0=0.04715",
            "changed constant",
        ),
        ("norm", "layernorm", "eps_outside_sqrt", "C2N4001", "operand0=eps)", "eps misplaced"),
        ("norm", "rmsnorm", "eps_outside_sqrt", "C2N4001", "data2=eps_t", "eps misplaced"),
    ],
)
def test_wrong_output_lands_on_its_port_line(
    suite: str, stem: str, flaw: str, code: str, marker: str, mechanism: str
) -> None:
    port, rep = _run(suite, stem, flaw)
    assert rep.verdict == "fail"
    want = _line(port, marker)
    hits = [f for f in rep.findings if f.code == code and f.loc.line == want]
    assert hits, [(f.code, f.loc.line) for f in rep.findings]
    assert any(mechanism in n for n in hits[0].notes), hits[0].notes
    assert any(n.startswith("advice:") for n in hits[0].notes)


def test_numerics_name_iteration_and_mechanism() -> None:
    port, rep = _run("linalg", "matmul_tiled", "stale_psum")
    wrong = [n for n in rep.numerics if n["classification"] != "expected"]
    assert wrong and wrong[0]["mechanism"] == "stale accumulator"
    assert wrong[0]["store_line"] == _line(port, "nisa.dma_copy(dst=C[")
    assert "m=128" in wrong[0]["iterations"]


def test_no_precision_verdict_for_a_port_without_narrow_dtypes() -> None:
    _, rep = _run("norm", "softmax_naive", "ragged_path")
    assert not any(f.code == "C2N4002" for f in rep.findings)
    assert not any(n["classification"] == "precision" for n in rep.numerics)


def test_precision_kept_where_the_port_narrows() -> None:
    _, rep = _run("linalg", "matmul_tiled", "bf16_inputs")
    assert any(f.code == "C2N4002" for f in rep.findings)


def test_narrowing_reads_code_not_comments_or_docstring() -> None:
    assert narrowing("x = nl.ndarray((4, 4), dtype=nl.bfloat16)\n")
    assert narrowing("t = nl.ndarray((4,), dtype=nl.float8_e4m3)\n")
    assert not narrowing('"""no bf16 here"""\nx = 1  # not bfloat16\n')


def test_loop_targets_nest_and_unpack() -> None:
    src = "def k(a):\n    for i in range(2):\n        for j, q in z:\n            s(i)\n    t()\n"
    loops = rootcause.loop_targets(src)
    assert loops[4] == ("i", "j", "q")
    assert loops[5] == ()


def test_name_reads_and_accumulations() -> None:
    src = (
        "def k(weight, x):\n"
        "    acc = nl.zeros((1, 512), dtype=nl.float32, buffer=nl.psum)\n"
        "    nisa.dma_copy(\n"
        "        dst=w_t, src=weight[k : k + 4, :])\n"
        "    acc += nl.matmul(ones, x, transpose_x=True)\n"
        "    nisa.nc_matmul(dst=ps[0:4, 0:8], stationary=a, moving=w_t, accumulate=kt > 0)\n"
        "    nl.store(o, value=nl.copy(acc))\n"
    )
    reads = rootcause.name_reads(src)
    assert reads["weight"] == {3, 4} and 7 in reads["acc"] and 2 not in reads.get("acc", ())
    assert rootcause.accumulations(src) == {5: "acc", 6: "ps"}


def test_wrong_reduction_axis_on_a_square_shape() -> None:
    """Row sums for column sums of a square matrix have the right shape: the axis is still named."""
    port = ROOT / "corpus/reduce/ports/column_sum_flaw_wrong_axis.py"
    rep = check(
        ROOT / "corpus/reduce/column_sum.cu",
        port,
        seeds=1,
        overrides={"rows": 129, "cols": 129},
        extra_points=False,
    )
    assert rep.verdict == "fail"
    assert [n.get("mechanism") for n in rep.numerics] == ["wrong reduction axis"]
    hits = [f for f in rep.findings if f.code == "C2N4001"]
    assert hits and hits[0].loc.line == _line(port, "tensor_reduce")
