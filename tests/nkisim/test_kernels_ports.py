"""Hand-written NKI ports of corpus kernels (``corpus/<suite>/ports/``), run through the simulator.

Correct ports must match the corpus NumPy reference on every test point of the binding. Each
deliberately flawed port must show its flaw: numerical flaws do not match on at least one shape
(and show the structure their ``EXPECT:`` line names), performance flaws match but leave the
evidence in the instruction trace, the SBUF overflow is refused by the simulator.
"""

from __future__ import annotations

import ast
import importlib.util
import keyword
import re
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest

nkisim = pytest.importorskip("cuda2nki.nkisim")
if not hasattr(nkisim, "simulate_kernel"):
    pytest.skip("simulator entry points not available yet", allow_module_level=True)

from cuda2nki.binding import Binding, generate_inputs, load_binding  # noqa: E402
from cuda2nki.diagnostics import DiagnosticError  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "corpus"

# (suite, corpus stem) of every kernel with a correct port
PORTED = (
    ("basic", "vector_add"),
    ("activation", "gelu_tanh"),
    ("norm", "softmax_naive"),
    ("norm", "softmax_block_tree"),
    ("norm", "layernorm"),
    ("norm", "rmsnorm"),
    ("linalg", "matmul_tiled"),
    ("linalg", "transpose_shared"),
    ("linalg", "attention_scores"),
    ("reduce", "row_max_warp"),
    ("reduce", "column_sum"),
    ("reduce", "reduce_shared_tree"),
    ("lowp", "matmul_bf16"),
    ("lowp", "gelu_bf16"),
    ("misc", "embedding_gather"),
    ("misc", "nll_gather"),
    ("activation", "gelu_scaling_expr"),
    ("linalg", "matmul_bias_nullable"),
)


# ---------------------------------------------------------------------------------- helpers
@cache
def binding(suite: str, stem: str) -> Binding:
    return load_binding(CORPUS / suite / f"{stem}.toml")


@cache
def reference_fn(suite: str, stem: str):
    path = CORPUS / suite / f"{stem}_ref.py"
    spec = importlib.util.spec_from_file_location(f"corpus_ref_{suite}_{stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.reference


def port_path(suite: str, name: str) -> Path:
    return CORPUS / suite / "ports" / f"{name}.py"


@cache
def port_params(path: Path, func: str) -> tuple[str, ...]:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == func:
            return tuple(a.arg for a in node.args.args)
    raise AssertionError(f"{path}: no function {func}")


@cache
def port_kernel(path: Path, func: str):
    return nkisim.load_kernel(str(path), func)


def py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def points(b: Binding) -> list[dict]:
    return b.test_points()


def run_port(suite: str, stem: str, port: str, point: dict, seed: int = 0):
    """Simulate one port on one binding test point; returns (result, outputs, reference, tol)."""
    b = binding(suite, stem)
    resolved = b.resolve(point)
    arrays = generate_inputs(resolved, seed)
    want = reference_fn(suite, stem)(
        {t.name: arrays[t.name] for t in b.tensors if t.role != "out"}, resolved.scalars
    )
    path = port_path(suite, port)
    func = b.kernel or stem
    params = port_params(path, func)
    args = {py_name(t.name): arrays[t.name] for t in b.tensors if t.role in ("in", "inout")}
    args.update({s: resolved.scalars[s] for s in resolved.scalars if s in params})
    res = nkisim.simulate_kernel(port_kernel(path, func), args)
    outs = res.outputs if isinstance(res.outputs, (tuple, list)) else (res.outputs,)
    if isinstance(res.outputs, dict):
        outs = tuple(res.outputs.values())
    names = [t.name for t in b.tensors if t.role in ("out", "inout")]
    assert len(outs) == len(names), f"{port}: {len(outs)} outputs, binding has {names}"
    got = {n: np.asarray(o) for n, o in zip(names, outs)}
    check = b.meta.get("check", {})
    tol = (float(check.get("rtol", 1e-5)), float(check.get("atol", 1e-6)))
    return res, got, want, tol


def close(got: np.ndarray, want: np.ndarray, tol: tuple[float, float]) -> np.ndarray:
    g = got.astype(np.float64)
    w = np.asarray(want).astype(np.float64)
    assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
    # exact references (rtol = atol = 0) still allow the last-ulp differences of fp32 transcendental
    # math; exact kernels (copies, max) meet them anyway
    rtol, atol = max(tol[0], 2e-6), max(tol[1], 1e-6)
    return np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def assert_matches(got: dict, want: dict, tol, what: str) -> None:
    for name, w in want.items():
        ok = close(got[name], w, tol)
        if not ok.all():
            bad = np.argwhere(~ok)[0]
            raise AssertionError(
                f"{what}: output {name}: {int((~ok).sum())}/{ok.size} mismatches, first at "
                f"{tuple(bad)}: got {got[name][tuple(bad)]!r}, want {np.asarray(w)[tuple(bad)]!r}"
            )


def mismatch(got: dict, want: dict, tol) -> dict[str, int]:
    return {n: int((~close(got[n], w, tol)).sum()) for n, w in want.items()}


def engines(res) -> Counter:
    return Counter(i.engine for i in res.trace)


def dmas(res) -> list:
    return [i for i in res.trace if i.engine == "dma"]


# ---------------------------------------------------------------------------------- correct ports
CORRECT = [(s, k, i) for s, k in PORTED for i in range(len(points(binding(s, k))))]


@pytest.mark.parametrize(("suite", "stem", "pt"), CORRECT, ids=[f"{k}-{i}" for _, k, i in CORRECT])
def test_correct_port_matches_reference(suite, stem, pt):
    point = points(binding(suite, stem))[pt]
    _, got, want, tol = run_port(suite, stem, f"{stem}_port", point)
    assert_matches(got, want, tol, f"{stem}_port at {point}")


# correct ports in the legacy neuronxcc.nki API
LEGACY_PORTED = (("norm", "softmax_naive"), ("norm", "rmsnorm"))
LEGACY = [(s, k, i) for s, k in LEGACY_PORTED for i in range(len(points(binding(s, k))))]


@pytest.mark.parametrize(("suite", "stem", "pt"), LEGACY, ids=[f"{k}-{i}" for _, k, i in LEGACY])
def test_correct_legacy_port_matches_reference(suite, stem, pt):
    point = points(binding(suite, stem))[pt]
    _, got, want, tol = run_port(suite, stem, f"{stem}_port_legacy", point)
    assert_matches(got, want, tol, f"{stem}_port_legacy at {point}")


def test_every_port_file_is_known():
    """Every file under a ports/ folder is a tested correct port or a tested flaw."""
    tested = {f"{k}_port" for _, k in PORTED} | set(FLAWS)
    tested |= {f"{k}_port_legacy" for _, k in LEGACY_PORTED}
    found = {p.stem for p in CORPUS.glob("*/ports/*.py")}
    assert found <= tested, f"untested port files: {sorted(found - tested)}"
    for p in CORPUS.glob("*/ports/*_flaw_*.py"):
        doc = ast.get_docstring(ast.parse(p.read_text())) or ""
        lines = [ln for ln in doc.splitlines() if ln.startswith("EXPECT: ")]
        assert len(lines) == 1, p
        # EXPECT: <verdict>[:<defect class>] <ids...> -- at least one of the ids is expected
        verdict = lines[0].split()[1].rstrip(";").split(":")[0]
        assert verdict in ("pass", "precision", "defect", "violation"), p
        assert re.search(r"\bC2N[345]\d{3}\b", lines[0]), p


# ---------------------------------------------------------------------------------- numerical flaws
FLAWS = {
    "softmax_naive_flaw_missing_tail": ("norm", "softmax_naive"),
    "softmax_naive_flaw_reload_inner": ("norm", "softmax_naive"),
    "matmul_tiled_flaw_bf16_accum": ("linalg", "matmul_tiled"),
    "matmul_tiled_flaw_bf16_inputs": ("linalg", "matmul_tiled"),
    "softmax_naive_flaw_no_max_shift": ("norm", "softmax_naive"),
    "softmax_naive_flaw_ragged_path": ("norm", "softmax_naive"),
    "matmul_tiled_flaw_transposed_operand": ("linalg", "matmul_tiled"),
    "matmul_tiled_flaw_stale_psum": ("linalg", "matmul_tiled"),
    "matmul_tiled_flaw_vector_engine": ("linalg", "matmul_tiled"),
    "column_sum_flaw_wrong_axis": ("reduce", "column_sum"),
    "row_max_warp_flaw_off_by_one": ("reduce", "row_max_warp"),
    "layernorm_flaw_unwritten_output": ("norm", "layernorm"),
    "vector_add_flaw_literal_thread": ("basic", "vector_add"),
    "gelu_tanh_flaw_per_element_dma": ("activation", "gelu_tanh"),
    "rmsnorm_flaw_sbuf_overflow": ("norm", "rmsnorm"),
    "transpose_shared_flaw_tiny_dma": ("linalg", "transpose_shared"),
    "matmul_tiled_flaw_retranspose": ("linalg", "matmul_tiled"),
    "matmul_tiled_flaw_transposed_result": ("linalg", "matmul_tiled"),
    "row_max_warp_flaw_warp_lanes": ("reduce", "row_max_warp"),
    "softmax_naive_flaw_large_batch": ("norm", "softmax_naive"),
    "gelu_tanh_flaw_changed_constant": ("activation", "gelu_tanh"),
    "layernorm_flaw_eps_outside_sqrt": ("norm", "layernorm"),
    "rmsnorm_flaw_eps_outside_sqrt": ("norm", "rmsnorm"),
    "gelu_tanh_flaw_one_partition": ("activation", "gelu_tanh"),
    "layernorm_flaw_reload_weights": ("norm", "layernorm"),
    "nll_gather_flaw_whole_rows": ("misc", "nll_gather"),
    "gelu_scaling_expr_flaw_missing_sqrt": ("activation", "gelu_scaling_expr"),
    "gelu_scaling_expr_flaw_sqrt_2pi_legacy": ("activation", "gelu_scaling_expr"),
    "matmul_bias_nullable_flaw_untransposed_weight": ("linalg", "matmul_bias_nullable"),
    "matmul_bias_nullable_flaw_vector_engine": ("linalg", "matmul_bias_nullable"),
    "column_sum_flaw_stale_psum_legacy": ("reduce", "column_sum"),
    "rmsnorm_flaw_eps_squared_legacy": ("norm", "rmsnorm"),
    "softmax_naive_flaw_wrong_axis": ("norm", "softmax_naive"),
    "layernorm_flaw_eps_on_mean": ("norm", "layernorm"),
    "column_sum_flaw_wrong_axis_legacy": ("reduce", "column_sum"),
    "matmul_bias_nullable_flaw_untransposed_weight_legacy": ("linalg", "matmul_bias_nullable"),
    "softmax_naive_flaw_ragged_path_legacy": ("norm", "softmax_naive"),
    "gelu_tanh_flaw_one_partition_legacy": ("activation", "gelu_tanh"),
    "rmsnorm_flaw_reload_weight_legacy": ("norm", "rmsnorm"),
    "nll_gather_flaw_whole_rows_legacy": ("misc", "nll_gather"),
    "matmul_tiled_flaw_vector_engine_legacy": ("linalg", "matmul_tiled"),
}


def run_flaw(flaw: str, point: dict | None = None, idx: int = 0):
    suite, stem = FLAWS[flaw]
    pt = point if point is not None else points(binding(suite, stem))[idx]
    return run_port(suite, stem, flaw, pt)


def test_missing_tail_leaves_tail_rows_unwritten():
    for pt in points(binding("norm", "softmax_naive")):
        _, got, want, tol = run_flaw("softmax_naive_flaw_missing_tail", pt)
        full = (pt["N"] // 128) * 128
        out = got["output"]
        assert np.isnan(out[full:]).all(), pt
        assert close(out[:full], want["output"][:full], tol).all(), pt
    # no binding point is a multiple of 128, so every one of them fails
    assert all(p["N"] % 128 for p in points(binding("norm", "softmax_naive")))


def test_bf16_accumulation_loses_precision_but_stays_near():
    pt = {**binding("linalg", "matmul_tiled").defaults, "M": 100, "N": 17, "K": 257}
    _, got, want, tol = run_flaw("matmul_tiled_flaw_bf16_accum", pt)
    assert mismatch(got, want, tol)["C"] > 0
    # within a bf16 accumulation bound: a few bf16 roundings relative to sum |a||b|
    err = np.abs(got["C"].astype(np.float64) - want["C"])
    b = binding("linalg", "matmul_tiled").resolve(pt)
    arr = generate_inputs(b, 0)
    mag = np.abs(arr["A"].astype(np.float64)) @ np.abs(arr["B"].astype(np.float64))
    assert (err <= 3 * 2.0**-8 * mag + 1e-6).all()


def test_transposed_operand_gives_the_transpose_on_square_blocks():
    pt = {**binding("linalg", "matmul_tiled").defaults, "M": 96, "N": 96, "K": 130}
    _, got, want, tol = run_flaw("matmul_tiled_flaw_transposed_operand", pt)
    assert mismatch(got, want, tol)["C"] > 0
    assert close(got["C"].T, want["C"], tol).all()


def test_transposed_operand_fails_on_rectangular_blocks():
    with pytest.raises(DiagnosticError) as exc:
        run_flaw("matmul_tiled_flaw_transposed_operand")  # M=64, N=96
    assert exc.value.diagnostic.code == "C2N3014"  # dst does not hold the [N, M] result


def test_stale_psum_corrupts_every_block_after_the_first():
    pt = {**binding("linalg", "matmul_tiled").defaults, "M": 200, "N": 96, "K": 130}
    _, got, want, tol = run_flaw("matmul_tiled_flaw_stale_psum", pt)
    ok = close(got["C"], want["C"], tol)
    # rows past the first block hold the sum of two blocks (a stray near-zero may still match)
    assert ok[:128].all() and (~ok[128:]).mean() > 0.98
    # binding points are all one block: the flaw hides there
    for p in points(binding("linalg", "matmul_tiled")):
        _, got, want, tol = run_flaw("matmul_tiled_flaw_stale_psum", p)
        assert mismatch(got, want, tol)["C"] == 0


def test_wrong_reduction_axis():
    for pt in points(binding("reduce", "column_sum")):
        _, got, want, tol = run_flaw("column_sum_flaw_wrong_axis", pt)
        assert mismatch(got, want, tol)["colsum"] > 0, pt
    pt = {"rows": 129, "cols": 129}
    _, got, _, tol = run_flaw("column_sum_flaw_wrong_axis", pt)
    b = binding("reduce", "column_sum").resolve(pt)
    mat = generate_inputs(b, 0)["mat"].astype(np.float64)
    assert close(got["colsum"], mat.sum(axis=1), tol).all()


def test_off_by_one_store_shifts_by_one_row():
    for pt in points(binding("reduce", "row_max_warp")):
        _, got, want, tol = run_flaw("row_max_warp_flaw_off_by_one", pt)
        r = got["rowmax"]
        assert np.isnan(r[0])
        assert close(r[1:], want["rowmax"][:-1], tol).all()
        assert mismatch(got, want, tol)["rowmax"] > 0


def test_unwritten_side_outputs():
    for pt in points(binding("norm", "layernorm")):
        _, got, want, tol = run_flaw("layernorm_flaw_unwritten_output", pt)
        assert close(got["out"], want["out"], tol).all()
        assert np.isnan(got["mean"]).all() and np.isnan(got["rstd"]).all()


def test_sbuf_overflow_is_refused():
    with pytest.raises(DiagnosticError) as exc:
        run_flaw("rmsnorm_flaw_sbuf_overflow")
    assert exc.value.diagnostic.code == "C2N3017"


def test_changed_constant_is_the_gelu_with_that_constant():
    pt = points(binding("activation", "gelu_tanh"))[0]
    _, got, want, tol = run_flaw("gelu_tanh_flaw_changed_constant", pt)
    assert mismatch(got, want, tol)["out"] > 0
    b = binding("activation", "gelu_tanh").resolve(pt)
    x = generate_inputs(b, 0)["inp"].astype(np.float64)
    mistyped = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.04715 * x**3)))
    assert close(got["out"], mistyped, (1e-5, 1e-6)).all()


@pytest.mark.parametrize(
    "flaw", ["layernorm_flaw_eps_outside_sqrt", "rmsnorm_flaw_eps_outside_sqrt"]
)
def test_misplaced_eps_hides_on_ordinary_rows(flaw):
    # normal inputs: the variance is far above eps, and eps's place makes no visible difference
    _, got, want, tol = run_flaw(flaw)
    assert not any(mismatch(got, want, tol).values())


# ---------------------------------------------------------------------------------- performance flaws
def _correct(stem_suite: tuple[str, str], idx: int = 0):
    suite, stem = stem_suite
    pt = points(binding(suite, stem))[idx]
    return run_port(suite, stem, f"{stem}_port", pt)


def test_reload_flaw_matches_but_triples_input_dma():
    for i, pt in enumerate(points(binding("norm", "softmax_naive"))):
        res, got, want, tol = run_flaw("softmax_naive_flaw_reload_inner", pt)
        assert_matches(got, want, tol, "reload flaw")
        good, *_ = _correct(("norm", "softmax_naive"), i)
        read = sum(d.dma_bytes for d in dmas(res))
        read_good = sum(d.dma_bytes for d in dmas(good))
        n_out = pt["N"] * pt["C"] * 4
        assert read - n_out == 3 * (read_good - n_out)


def test_vector_engine_matmul_matches_without_tensor_engine():
    for pt in points(binding("linalg", "matmul_tiled")):
        res, got, want, tol = run_flaw("matmul_tiled_flaw_vector_engine", pt)
        assert_matches(got, want, tol, "vector-engine matmul")
        e = engines(res)
        assert e.get("tensor", 0) == 0
        assert e["vector"] + e.get("gpsimd", 0) >= pt["K"]


def test_literal_thread_translation_uses_one_element_per_partition():
    res, got, want, tol = run_flaw("vector_add_flaw_literal_thread")
    assert_matches(got, want, tol, "literal vector add")
    n = binding("basic", "vector_add").defaults["N"]
    d = dmas(res)
    assert len(d) == 3 * ((n + 127) // 128)
    assert all(x.free == 1 for x in res.trace if x.engine != "dma")
    good, *_ = _correct(("basic", "vector_add"))
    assert len(dmas(good)) * 10 < len(d)


def test_per_element_dma_loop():
    pt = {"N": 129}
    res, got, want, tol = run_flaw("gelu_tanh_flaw_per_element_dma", pt)
    assert_matches(got, want, tol, "per-element gelu")
    d = dmas(res)
    assert len(d) == 2 * 129 and all(x.dma_bytes == 4 for x in d)


def test_tiny_dma_transpose():
    for i, pt in enumerate(points(binding("linalg", "transpose_shared"))):
        res, got, want, tol = run_flaw("transpose_shared_flaw_tiny_dma", pt)
        assert_matches(got, want, tol, "32x32 transpose")
        d = dmas(res)
        assert max(x.dma_bytes for x in d) <= 32 * 32 * 4
        good, *_ = _correct(("linalg", "transpose_shared"), i)
        assert len(d) > 2 * len(dmas(good))


def test_embedding_port_long_sequences_use_the_position_tiles():
    # binding points all have T <= 128; T = 300 takes the tiled-positions path
    b = binding("misc", "embedding_gather")
    pt = {**b.defaults, "B": 2, "T": 300, "C": 40, "V": 50}
    _, got, want, tol = run_port("misc", "embedding_gather", "embedding_gather_port", pt)
    assert_matches(got, want, tol, "encoder_forward T=300")


def test_bf16_inputs_lose_precision_everywhere():
    b = binding("linalg", "matmul_tiled")
    for pt in points(b):
        _, got, want, tol = run_flaw("matmul_tiled_flaw_bf16_inputs", pt)
        assert mismatch(got, want, tol)["C"] > 0, pt
        arr = generate_inputs(b.resolve(pt), 0)
        mag = np.abs(arr["A"].astype(np.float64)) @ np.abs(arr["B"].astype(np.float64))
        err = np.abs(got["C"].astype(np.float64) - want["C"])
        assert (err <= 2 * 2.0**-8 * mag + 1e-6).all()  # two bf16 roundings per product


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_softmax_without_max_shift_overflows_on_large_inputs():
    b = binding("norm", "softmax_naive")
    pt = points(b)[0]
    _, got, want, tol = run_flaw("softmax_naive_flaw_no_max_shift", pt)
    assert_matches(got, want, tol, "unshifted softmax on ordinary inputs")
    x = generate_inputs(b.resolve(pt), 0)["input"] * np.float32(100.0)
    k = port_kernel(port_path("norm", "softmax_naive_flaw_no_max_shift"), "softmax_naive")
    out = np.asarray(nkisim.simulate_kernel(k, {"input": x}).outputs)
    good = port_kernel(port_path("norm", "softmax_naive_port"), "softmax_naive")
    ref = np.asarray(nkisim.simulate_kernel(good, {"input": x}).outputs)
    assert np.isfinite(ref).all() and np.isnan(out).any()


@pytest.mark.parametrize(("height", "width"), [(520, 96), (200, 2177), (3, 1)])
def test_transpose_port_narrow_and_wide_paths(height, width):
    # narrow inputs assemble whole output rows; wide ones store strided strips
    pt = {"height": height, "width": width}
    res, got, want, tol = run_port("linalg", "transpose_shared", "transpose_shared_port", pt)
    assert_matches(got, want, tol, f"transpose {height}x{width}")
    if width < 128:
        assert len(dmas(res)) == -(-height // 128) + -(-height // 2048)


def test_attention_port_long_sequence_and_wide_head():
    # several query tiles, two 512-key blocks (one fully above the diagonal), D over two K-tiles
    b = binding("linalg", "attention_scores")
    pt = {**b.defaults, "BH": 1, "T": 700, "D": 160}
    res, got, want, tol = run_port("linalg", "attention_scores", "attention_scores_port", pt)
    assert_matches(got, want, tol, "attention T=700 D=160")
    # Q and K loaded once per head (6 row tiles each), one store per 128-query tile
    assert len(dmas(res)) == 2 * 6 + 6


def _transposes(res) -> int:
    return sum(1 for i in res.trace if i.op in ("nc_transpose", "dma_transpose"))


def test_retranspose_matches_but_repeats_transposes_per_column_block():
    b = binding("linalg", "matmul_tiled")
    pt = {**b.defaults, "M": 128, "N": 1024, "K": 256}  # two 512-column blocks of C
    res, got, want, tol = run_flaw("matmul_tiled_flaw_retranspose", pt)
    assert_matches(got, want, tol, "retranspose")
    good, *_ = run_port("linalg", "matmul_tiled", "matmul_tiled_port", pt)
    assert _transposes(res) > _transposes(good)
    assert _transposes(res) >= 2 * (pt["K"] // 128)  # A's blocks again for every block of C


def test_transposed_result_matches_but_transposes_every_block():
    for pt in points(binding("linalg", "matmul_tiled")):
        res, got, want, tol = run_flaw("matmul_tiled_flaw_transposed_result", pt)
        assert_matches(got, want, tol, "transposed result")
        blocks = -(-pt["M"] // 128) * -(-pt["N"] // 128)
        assert sum(1 for i in res.trace if i.op == "nc_transpose") >= blocks


def test_warp_lanes_match_with_many_narrow_instructions():
    for i, pt in enumerate(points(binding("reduce", "row_max_warp"))):
        res, got, want, tol = run_flaw("row_max_warp_flaw_warp_lanes", pt)
        assert_matches(got, want, tol, "warp lanes")
        good, *_ = _correct(("reduce", "row_max_warp"), i)
        compute = [x for x in res.trace if x.engine != "dma"]
        compute_good = [x for x in good.trace if x.engine != "dma"]
        assert len(compute) > 3 * len(compute_good)
        assert any(x.free <= 32 for x in compute)


def test_large_batch_path_is_wrong_only_from_512_rows():
    base = binding("norm", "softmax_naive").defaults
    for n, wrong in ((511, False), (512, True), (640, True)):
        _, got, want, tol = run_flaw("softmax_naive_flaw_large_batch", {**base, "N": n})
        assert (mismatch(got, want, tol)["output"] > 0) is wrong, n


def test_one_partition_and_reload_flaws_compute_the_right_values():
    for flaw in (
        "gelu_tanh_flaw_one_partition",
        "layernorm_flaw_reload_weights",
        "nll_gather_flaw_whole_rows",
    ):
        for pt in points(binding(*FLAWS[flaw])):
            _, got, want, tol = run_flaw(flaw, pt)
            assert not any(mismatch(got, want, tol).values()), (flaw, pt)
