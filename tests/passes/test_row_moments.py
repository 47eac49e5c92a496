"""row-moments: a row's mean and variance come from one bn_stats/bn_aggr pass (chunks of at most
512 columns, ragged last chunk), the normalisation runs as one scalar-engine activation, the ports
stay correct on both targets, and the generated layer norm and RMS norm cost within 1.25x of the
expert ports in bench/expert."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import load_binding
from cuda2nki.ir.nodes import (
    Access,
    Activation,
    Axis,
    Binary,
    BnAggr,
    BnStats,
    Compute,
    Const,
    Domain,
    Kernel,
    Lit,
    Loop,
    Param,
    Read,
    Reduce,
    ScalarDecl,
    Sym,
    TensorDecl,
    TensorReduce,
    Unary,
)
from cuda2nki.ir.ops import AxisKind, Idiom, Op, Role
from cuda2nki.nkisim.importer import load_kernel
from cuda2nki.nkisim.kernel import simulate_kernel
from cuda2nki.pipeline import port_file, port_intent
from cuda2nki.rewrite import nodes
from tests.passes import intent_examples as ex
from tests.port.acceptance import CORPUS, check_kernel
from tests.port.intent_acceptance import check

EXPERT = Path(__file__).resolve().parents[2] / "bench" / "expert"


def _norm(cols, var_div, squares: str = "centred", name: str = "ln") -> Kernel:
    """A layer norm over ``cols`` columns whose variance divides by ``var_div``; ``squares``:
    ``centred`` ((x - m) * (x - m)) or ``square`` (square(x - m))."""
    i, j = Sym("i"), Sym("j")
    rows_n = Sym("R")
    rows, both = Domain((Axis("i", rows_n),)), Domain((Axis("i", rows_n), Axis("j", cols)))
    red = (Axis("k", cols, AxisKind.REDUCTION),)
    xk = Read("x", (i, Sym("k")))
    ck = Binary(Op.SUB, xk, Read("m", (i,)))
    sq = Binary(Op.MUL, ck, ck) if squares == "centred" else Unary(Op.SQUARE, ck)
    n = Param("C") if isinstance(cols, Sym) else Lit(float(cols.value))
    scalars = (ScalarDecl("R"),) + ((ScalarDecl("C"),) if isinstance(cols, Sym) else ())
    y = Binary(
        Op.MUL,
        Binary(Op.SUB, Read("x", (i, j)), Read("m", (i,))),
        Unary(
            Op.RSQRT, Binary(Op.ADD, Binary(Op.DIV, Reduce(Op.ADD, red, sq), var_div), Lit(1e-5))
        ),
    )
    return Kernel(
        name,
        params=(
            TensorDecl("x", (rows_n, cols), "float32", Role.IN),
            TensorDecl("y", (rows_n, cols), "float32", Role.OUT),
            *scalars,
        ),
        temps=(TensorDecl("m", (rows_n,), "float32", Role.TEMP),),
        body=(
            Compute(
                Access("m", (i,)),
                rows,
                Binary(Op.DIV, Reduce(Op.ADD, red, xk), n),
                idiom=Idiom.NORM,
            ),
            Compute(Access("y", (i, j)), both, y, idiom=Idiom.NORM),
        ),
    )


def _stmts(k: Kernel, cls: type) -> list:
    return [s for s in nodes(k.body) if isinstance(s, cls)]


@pytest.mark.parametrize(
    ("kernel", "chunk_loop"),
    [
        (lambda: ex.layernorm(), True),
        (lambda: _norm(Sym("C"), Param("C")), True),
        (lambda: _norm(Sym("C"), Param("C"), "square"), True),
        (lambda: _norm(Const(700), Lit(700.0)), True),  # two chunks, the last ragged
        (lambda: _norm(Const(300), Lit(300.0), "square"), False),  # one chunk, no loop
    ],
)
def test_mean_and_variance_come_from_one_bn_pass(kernel, chunk_loop: bool) -> None:
    scheduled, _src, _ = port_intent(kernel())
    assert len(_stmts(scheduled, BnStats)) == 1 and len(_stmts(scheduled, BnAggr)) == 1
    assert not _stmts(scheduled, TensorReduce), "the row is reduced once, by bn_stats"
    loops = [s for s in _stmts(scheduled, Loop) if [type(b) for b in s.body] == [BnStats]]
    assert bool(loops) == chunk_loop
    tails = [s for s in _stmts(scheduled, Activation) if s.op == Op.COPY]
    assert len(tails) == 1 and tails[0].scale is not None and tails[0].bias is not None


def test_a_variance_over_another_count_is_left_alone() -> None:
    """Sample variance (divided by C - 1) is not what bn_aggr computes."""
    scheduled, _src, _ = port_intent(_norm(Const(300), Lit(299.0)))
    assert not _stmts(scheduled, BnStats) and not _stmts(scheduled, BnAggr)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "kernel",
    [
        lambda: ex.layernorm(),
        lambda: _norm(Sym("C"), Param("C"), "square"),
        lambda: _norm(Const(700), Lit(700.0)),
        lambda: _norm(Const(300), Lit(300.0)),
    ],
)
def test_intent_ports_match_the_evaluator(kernel, target: str, tmp_path) -> None:
    row = check(kernel(), target, tmp_path)
    assert row.status == "match", row.detail


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", ["norm/layernorm", "optional/layernorm_nullable"])
def test_corpus_layer_norms_use_bn_stats_and_stay_correct(rel: str, target: str, tmp_path) -> None:
    cu = CORPUS / f"{rel}.cu"
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), target=target)
    assert "nisa.bn_stats(" in res.source and "nisa.bn_aggr(" in res.source
    out = check_kernel(cu, target, tmp_path)
    assert out.status == "match", out


def _profile(path: Path, name: str, inputs: dict):
    return simulate_kernel(load_kernel(path, name), inputs)


@pytest.mark.parametrize(("rows", "cols"), [(512, 2048), (300, 1000)])
def test_generated_layernorm_is_within_the_expert_ratio(rows: int, cols: int, tmp_path) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 3 + 1
    w, b = (rng.standard_normal(cols).astype(np.float32) for _ in range(2))
    cu = CORPUS / "norm" / "layernorm.cu"
    port = tmp_path / "ln.py"
    port.write_text(port_file(cu, binding=load_binding(cu.with_suffix(".toml"))).source)
    args = {"inp": x, "weight": w, "bias": b}
    gen = simulate_kernel(load_kernel(port, "layernorm_forward"), args, profile=True)
    exp = simulate_kernel(
        load_kernel(EXPERT / "layernorm_bn.py", "layernorm_bn_kernel"), args, profile=True
    )
    mean = x.mean(axis=1, dtype=np.float64)
    rstd = 1 / np.sqrt(x.var(axis=1, dtype=np.float64) + 1e-5)
    want = (x - mean[:, None]) * rstd[:, None] * w + b
    for outs in (gen.outputs, exp.outputs):
        np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(outs[1], mean, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(outs[2], rstd, rtol=1e-4)
    ratio = gen.profile.overlapped_ns / exp.profile.overlapped_ns
    assert ratio <= 1.25, (ratio, gen.profile.to_text())


@pytest.mark.parametrize(("rows", "cols"), [(512, 2048), (200, 700)])
def test_generated_rmsnorm_is_within_the_expert_ratio(rows: int, cols: int, tmp_path) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    cu = CORPUS / "norm" / "rmsnorm.cu"
    port = tmp_path / "rms.py"
    port.write_text(port_file(cu, binding=load_binding(cu.with_suffix(".toml"))).source)
    gen = simulate_kernel(load_kernel(port, "rmsnorm_forward"), {"x": x, "w": w}, profile=True)
    exp = simulate_kernel(
        load_kernel(EXPERT / "rmsnorm_fused.py", "rmsnorm_fused_kernel"),
        {"x": x, "w": w},
        profile=True,
    )
    want = x / np.sqrt((x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-6) * w
    for got in (gen.outputs, exp.outputs):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    ratio = gen.profile.overlapped_ns / exp.profile.overlapped_ns
    assert ratio <= 1.25, (ratio, gen.profile.to_text())
