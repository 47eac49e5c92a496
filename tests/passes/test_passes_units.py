"""Each pass on its own: what it annotates or rewrites."""

from __future__ import annotations

from cuda2nki.ir.nodes import Alloc, Load, Loop, Matmul, Store
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from tests.passes import intent_examples as ex


def _attrs(kernel, idx=0):
    return dict(kernel.body[idx].attrs)


def _walk(stmts):
    for s in stmts:
        yield s
        if isinstance(s, Loop):
            yield from _walk(s.body)


def test_choose_layout_rows_and_matmul() -> None:
    ctx = PassContext()
    k = run_pipeline(ex.softmax(), parse_pipeline("choose-layout"), ctx)
    assert {_attrs(k, n)["layout"] for n in range(4)} == {"rows"}
    assert _attrs(k, 0)["p_axis"] == "i" and _attrs(k, 0)["f_axis"] == "j"
    k = run_pipeline(ex.matmul(), parse_pipeline("choose-layout"), ctx)
    assert _attrs(k)["layout"] == "matmul" and _attrs(k)["p_axis"] == "k"
    assert (
        _attrs(run_pipeline(ex.transpose(), parse_pipeline("choose-layout"), ctx))["layout"]
        == "transpose"
    )


def test_scan_is_refused_by_name() -> None:
    k = run_pipeline(ex.scan_refused(), parse_pipeline("choose-layout"), PassContext())
    assert _attrs(k)["layout"] == "unsupported" and "scan" in _attrs(k)["why"]


def test_coalesce_dma_gives_2kib_per_partition() -> None:
    k = run_pipeline(
        ex.saxpy(), parse_pipeline("choose-layout,tile-sizes,coalesce-dma"), PassContext()
    )
    assert _attrs(k)["layout"] == "flat" and _attrs(k)["f_tile"] == "512"
    k = run_pipeline(
        ex.saxpy(),
        parse_pipeline("choose-layout,tile-sizes,coalesce-dma{bytes=8192}"),
        PassContext(),
    )
    assert _attrs(k)["f_tile"] == "2048"


def test_without_coalescing_a_vector_uses_one_element_per_partition() -> None:
    k = run_pipeline(
        ex.saxpy(), parse_pipeline("choose-layout,tile-sizes,lower-tiles"), PassContext()
    )
    allocs = [s for s in _walk(k.body) if isinstance(s, Alloc)]
    assert all(a.shape[1].value == 1 for a in allocs)


def test_dtype_policy_psum_fp32_and_narrow_operands() -> None:
    ctx = PassContext()
    k = run_pipeline(ex.matmul("bfloat16"), parse_pipeline(None), ctx)
    allocs = {a.name: a for a in _walk(k.body) if isinstance(a, Alloc)}
    mm = [s for s in _walk(k.body) if isinstance(s, Matmul)]
    assert mm and all(allocs[m.dst.tensor].buffer == Buffer.PSUM for m in mm)
    assert all(allocs[m.dst.tensor].dtype == "float32" for m in mm)
    assert all(allocs[m.moving.tensor].dtype == "bfloat16" for m in mm)
    assert any(d.code == "C2N2510" for d in ctx.diagnostics)
    k = run_pipeline(ex.matmul("float32"), parse_pipeline(None), PassContext())
    mm = [s for s in _walk(k.body) if isinstance(s, Matmul)]
    allocs = {a.name: a for a in _walk(k.body) if isinstance(a, Alloc)}
    assert all(allocs[m.moving.tensor].dtype == "float32" for m in mm)


def test_dtype_policy_says_an_fp64_accumulator_is_narrowed() -> None:
    """A double accumulator becomes fp32: a warning that names fp64 and the number of terms,
    never the note that fp32 is what the CUDA kernel did."""
    from cuda2nki.diagnostics import Severity
    from cuda2nki.ir.parser import parse

    text = (
        "kernel rowsum(x: in float32[R, C], y: out float32[R], R: int32, C: int32) {{\n"
        "  @3:5 reduce: y[i] = reduce(add, j < C: x[i, j]; acc {acc}) for i < R;\n}}\n"
    )
    ctx = PassContext()
    run_pipeline(parse(text.format(acc="float64")), parse_pipeline(None), ctx)
    (d,) = [d for d in ctx.diagnostics if d.code in ("C2N2510", "C2N2515")]
    assert d.code == "C2N2515" and d.severity == Severity.WARNING
    assert "fp64" in d.message and "over C terms" in d.message
    ctx = PassContext()
    run_pipeline(parse(text.format(acc="float32")), parse_pipeline(None), ctx)
    assert [d.code for d in ctx.diagnostics if d.code in ("C2N2510", "C2N2515")] == ["C2N2510"]


def test_matmul_first_k_tile_overwrites_then_accumulates() -> None:
    k = run_pipeline(ex.matmul(), parse_pipeline(None), PassContext())
    flags = [m.accumulate for m in _walk(k.body) if isinstance(m, Matmul)]
    assert flags == [False, True] * 2  # the loop order for one column block, then for several


def test_hoist_loads_moves_invariant_broadcast_out_of_the_row_loop() -> None:
    spec = "choose-layout,tile-sizes,coalesce-dma,dtype-policy,lower-tiles"
    before = run_pipeline(ex.layernorm(), parse_pipeline(spec), PassContext())
    after = run_pipeline(ex.layernorm(), parse_pipeline(spec + ",hoist-loads"), PassContext())
    top_loads = lambda k: [s.src.tensor for s in k.body if isinstance(s, Load)]  # noqa: E731
    assert top_loads(before) == []
    assert sorted(top_loads(after)) == ["beta", "gamma"]


def test_rows_tiles_are_ragged_not_padded() -> None:
    k = run_pipeline(ex.softmax(), parse_pipeline(None), PassContext())
    stores = [s for s in _walk(k.body) if isinstance(s, Store)]
    assert stores and "Min" in type(stores[0].dst.dims[0].size).__name__


def test_scheduled_ir_round_trips_through_the_text_form() -> None:
    from cuda2nki.ir.parser import parse
    from cuda2nki.ir.printer import to_text
    from cuda2nki.pipeline import port_intent

    for make in (
        ex.saxpy,
        ex.softmax,
        ex.layernorm,
        ex.matmul,
        ex.transpose,
        ex.dot,
        ex.stencil_2d,
    ):
        scheduled = port_intent(make())[0]
        assert parse(to_text(scheduled)) == scheduled, make.__name__


def test_literal_statements_are_flagged_in_the_port() -> None:
    from cuda2nki.ir.ops import Idiom
    from cuda2nki.pipeline import port_intent

    k = ex.saxpy()
    k = k.replace(body=tuple(c.replace(idiom=Idiom.LITERAL) for c in k.body))
    _, src, diags = port_intent(k)
    assert "# C2N2500: literal translation" in src
    assert any(d.code == "C2N2500" for d in diags)
