"""common-tiles: a repeated engine instruction reads the first tile instead; an instruction whose
tile nothing reads is dropped; what must stay (a source written in between, a loop in between,
a different shape, an output) stays.  Ports of the corpus norms keep matching."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import TensorReduce, TensorScalar
from cuda2nki.ir.ops import Op
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.rewrite import nodes
from tests.port.acceptance import CORPUS, check_kernel

HEAD = "kernel k(x: in float32[R, C], y: out float32[R], R: int32, C: int32) {\n"
TILE = "alloc {n}: float32[128, {w}] sbuf;\n"
RED = "tensor_reduce(dst={d}[ds(0, 128), ds(0, 1)], op=add, src={s}[ds(0, 128), ds(0, C)], axes=(1,), negate=false);\n"
STORE = "store(dst=y[ds(0, 128)], src={s}[ds(0, 128), ds(0, 1)]);\n"
LOAD = "load(dst={d}[ds(0, 128), ds(0, C)], src=x[ds(0, 128), ds(0, C)]);\n"
ADD = "tensor_tensor(dst={d}[ds(0, 128), ds(0, 1)], op=add, a={a}[ds(0, 128), ds(0, 1)], b={b}[ds(0, 128), ds(0, 1)]);\n"


def _kernel(*lines: str):
    return parse(HEAD + "".join(lines) + "}\n", "k.ir")


def _run(kernel):
    return run_pipeline(kernel, parse_pipeline("common-tiles"), PassContext())


def _reduces(kernel) -> int:
    return sum(isinstance(s, TensorReduce) for s in nodes(kernel.body))


def _prologue() -> list[str]:
    return [TILE.format(n="xt", w="C"), LOAD.format(d="xt")]


def test_a_repeated_reduction_reads_the_first_tile() -> None:
    k = _kernel(
        *_prologue(),
        TILE.format(n="r1", w=1),
        RED.format(d="r1", s="xt"),
        TILE.format(n="r2", w=1),
        RED.format(d="r2", s="xt"),
        TILE.format(n="s", w=1),
        ADD.format(d="s", a="r1", b="r2"),
        STORE.format(s="s"),
    )
    got = _run(k)
    assert _reduces(got) == 1
    adds = [s for s in nodes(got.body) if type(s).__name__ == "TensorTensor"]
    assert adds[0].a.tensor == adds[0].b.tensor == "r1"


def test_a_source_written_in_between_ends_the_match() -> None:
    k = _kernel(
        *_prologue(),
        TILE.format(n="r1", w=1),
        RED.format(d="r1", s="xt"),
        LOAD.format(d="xt"),  # xt changes: the second reduction is new
        TILE.format(n="r2", w=1),
        RED.format(d="r2", s="xt"),
        TILE.format(n="s", w=1),
        ADD.format(d="s", a="r1", b="r2"),
        STORE.format(s="s"),
    )
    assert _reduces(_run(k)) == 2


def test_a_loop_in_between_ends_the_match() -> None:
    loop = "for q = range(0, 2, 1) affine {\n" + LOAD.format(d="xt") + "}\n"
    k = _kernel(
        *_prologue(),
        TILE.format(n="r1", w=1),
        RED.format(d="r1", s="xt"),
        loop,
        TILE.format(n="r2", w=1),
        RED.format(d="r2", s="xt"),
        TILE.format(n="s", w=1),
        ADD.format(d="s", a="r1", b="r2"),
        STORE.format(s="s"),
    )
    assert _reduces(_run(k)) == 2


def test_a_tile_nothing_reads_is_dropped_with_its_allocation() -> None:
    k = _kernel(
        *_prologue(),
        TILE.format(n="r1", w=1),
        RED.format(d="r1", s="xt"),
        TILE.format(n="unused", w="C"),
        "tensor_scalar(dst=unused[ds(0, 128), ds(0, C)], src=xt[ds(0, 128), ds(0, C)], op0=mul,"
        " operand0=2.0, reverse0=false, reverse1=false);\n",
        STORE.format(s="r1"),
    )
    got = _run(k)
    assert not any(isinstance(s, TensorScalar) for s in nodes(got.body))
    assert "unused" not in {getattr(s, "name", "") for s in got.body}
    assert _reduces(got) == 1  # what the store reads stays


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", ["norm/layernorm", "norm/softmax_naive", "norm/rmsnorm"])
def test_norm_ports_compute_each_statistic_once_and_match(rel: str, target: str, tmp_path) -> None:
    from cuda2nki.binding import load_binding
    from cuda2nki.pipeline import port_file

    path = CORPUS / f"{rel}.cu"
    if not path.exists():
        pytest.skip(f"{rel} not in the corpus")
    res = port_file(path, binding=load_binding(path.with_suffix(".toml")), target=target)
    keys = [
        s.replace(dst=None, loc=None)
        for s in nodes(res.ir_tiles.body)
        if isinstance(s, TensorReduce)
    ]
    assert len(keys) == len(set(keys)), "a reduction is computed twice"
    assert check_kernel(path, target, tmp_path).status == "match"


EXPF = "activation(dst={d}[ds(0, 128), ds(0, C)], op=exp, src=xt[ds(0, 128), ds(0, C)], bias=nb[ds(0, 128), ds(0, 1)]{extra});\n"
SUMOF = ", reduce_dst={r}[ds(0, 128), ds(0, 1)]"
NEG = "tensor_scalar(dst=nb[ds(0, 128), ds(0, 1)], src=xt[ds(0, 128), ds(0, 1)], op0=mul, operand0=-1.0, reverse0=false, reverse1=false);\n"
OUT = "store(dst=z[ds(0, 128), ds(0, C)], src={s}[ds(0, 128), ds(0, C)]);\n"
HEAD2 = (
    "kernel k(x: in float32[R, C], y: out float32[R], z: out float32[R, C], R: int32, C: int32) {\n"
)


def _softmax_like(first_sums: bool, second_sums: bool):
    """Two identical exp activations, either (or both) also summing its row."""
    lines = [
        *_prologue(),
        TILE.format(n="nb", w=1),
        NEG,
        TILE.format(n="e1", w="C"),
        *([TILE.format(n="s1", w=1)] if first_sums else []),
        EXPF.format(d="e1", extra=SUMOF.format(r="s1") if first_sums else ""),
        TILE.format(n="e2", w="C"),
        *([TILE.format(n="s2", w=1)] if second_sums else []),
        EXPF.format(d="e2", extra=SUMOF.format(r="s2") if second_sums else ""),
        STORE.format(s="s2" if second_sums else "s1"),
        OUT.format(s="e1" if second_sums else "e2"),
    ]
    return parse(HEAD2 + "".join(lines) + "}\n", "k.ir")


@pytest.mark.parametrize(
    ("first_sums", "second_sums"), [(False, True), (True, False), (True, True)]
)
def test_exp_is_computed_once_for_its_row_sum_and_its_output(first_sums, second_sums) -> None:
    got = _run(_softmax_like(first_sums, second_sums))
    acts = [s for s in nodes(got.body) if type(s).__name__ == "Activation"]
    assert len(acts) == 1 and acts[0].dst.tensor == "e1" and acts[0].reduce_dst is not None
    names = [getattr(s, "name", None) for s in got.body]
    assert names.index(acts[0].reduce_dst.tensor) < got.body.index(acts[0])  # allocated before
    reads = {v.src.tensor for v in nodes(got.body) if type(v).__name__ == "Store"}
    assert reads == {"e1", acts[0].reduce_dst.tensor}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "rel",
    ["norm/softmax_naive", "norm/softmax_online", "norm/softmax_block_tree", "norm/softmax_warp"],
)
def test_softmax_ports_compute_exp_once_and_match(rel: str, target: str, tmp_path) -> None:
    from cuda2nki.binding import load_binding
    from cuda2nki.pipeline import port_file

    path = CORPUS / f"{rel}.cu"
    res = port_file(path, binding=load_binding(path.with_suffix(".toml")), target=target)
    exps = [s for s in nodes(res.ir_tiles.body) if getattr(s, "op", None) is Op.EXP]
    assert len(exps) == 1, "exp is computed more than once"
    assert check_kernel(path, target, tmp_path).status == "match"


IOTA = (
    "iota(dst={d}[ds(0, 128), ds(0, C)], pattern=((1, <C>),), offset=0, channel_multiplier={m});\n"
)
FILL = "memset(dst={d}[ds(0, 128), ds(0, 1)], value={v});\n"
SCALE = (
    "tensor_scalar(dst={d}[ds(0, 128), ds(0, 1)], src={s}[ds(0, 128), ds(0, 1)], op0=mul, "
    "operand0=2.0, reverse0=false, reverse1=false);\n"
)


def _fills(kernel, kind: str) -> int:
    return sum(type(s).__name__ == kind for s in nodes(kernel.body))


def test_a_repeated_iota_reads_the_first_tile() -> None:
    """Index grids built for each statement of a fused nest (a causal mask, a rotary angle)."""
    k = _kernel(
        TILE.format(n="g1", w="C"),
        IOTA.format(d="g1", m=0),
        TILE.format(n="r1", w=1),
        RED.format(d="r1", s="g1"),
        TILE.format(n="g2", w="C"),
        IOTA.format(d="g2", m=0),
        TILE.format(n="g3", w="C"),
        IOTA.format(d="g3", m=1),  # another grid: stays
        TILE.format(n="r2", w=1),
        RED.format(d="r2", s="g2"),
        TILE.format(n="r3", w=1),
        RED.format(d="r3", s="g3"),
        TILE.format(n="s", w=1),
        ADD.format(d="s", a="r1", b="r3"),
        STORE.format(s="s"),
    )
    got = _run(k)
    assert _fills(got, "Iota") == 2
    assert _reduces(got) == 2  # the reduction of the repeated grid is a repeat too


@pytest.mark.parametrize(("value2", "merged"), [("4096.0", True), ("31.0", False)])
def test_a_repeated_memset_reads_the_first_tile(value2: str, merged: bool) -> None:
    k = _kernel(
        TILE.format(n="f1", w=1),
        FILL.format(d="f1", v="4096.0"),
        TILE.format(n="m1", w=1),
        SCALE.format(d="m1", s="f1"),
        TILE.format(n="f2", w=1),
        FILL.format(d="f2", v=value2),
        TILE.format(n="m2", w=1),
        SCALE.format(d="m2", s="f2"),
        TILE.format(n="s", w=1),
        ADD.format(d="s", a="m1", b="m2"),
        STORE.format(s="s"),
    )
    got = _run(k)
    assert _fills(got, "Memset") == (1 if merged else 2)
    assert _fills(got, "TensorScalar") == (1 if merged else 2)


def test_a_memset_accumulator_is_never_shared() -> None:
    """``acc`` starts as zeros and is added to; a later zero tile is not ``acc``."""
    k = _kernel(
        TILE.format(n="acc", w=1),
        FILL.format(d="acc", v="0.0"),
        TILE.format(n="one", w=1),
        FILL.format(d="one", v="1.0"),
        ADD.format(d="acc", a="acc", b="one"),
        TILE.format(n="z", w=1),
        FILL.format(d="z", v="0.0"),
        TILE.format(n="s", w=1),
        ADD.format(d="s", a="acc", b="z"),
        STORE.format(s="s"),
    )
    got = _run(k)
    assert _fills(got, "Memset") == 3
