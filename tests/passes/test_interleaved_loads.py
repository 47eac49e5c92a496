"""interleaved-loads: strided loads covering every offset 0..s-1 of a step s become one
contiguous load with strided views; what does not cover a contiguous range stays; the ports
that read even/odd pairs stay correct on both targets with fewer, larger DMAs."""

from __future__ import annotations

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.ir.nodes import Const, Load
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline
from cuda2nki.pipeline import port_file
from cuda2nki.rewrite import nodes
from tests.port.acceptance import CORPUS, check_kernel

HEAD = "kernel k(x: in float32[R, C], y: out float32[R, C], R: int32, C: int32) {\n"
TILE = "alloc {n}: float32[128, 64] sbuf;\n"
LOAD = "load(dst={n}[ds(0, 128), ds(0, 64)], src=x[ds(0, 128), ds({start}, 64, {step})]);\n"
ADD = "tensor_tensor(dst=s[ds(0, 128), ds(0, 64)], op=add, a={a}[ds(0, 128), ds(0, 64)], b={b}[ds(0, 128), ds(0, 64)]);\n"
STORE = "store(dst=y[ds(0, 128), ds(0, 64)], src=s[ds(0, 128), ds(0, 64)]);\n"


def _run(offsets: list[str], step: int):
    names = [f"a{i}" for i in range(len(offsets))]
    lines = [HEAD]
    for n, off in zip(names, offsets):
        lines += [TILE.format(n=n), LOAD.format(n=n, start=off, step=step)]
    lines += [
        "alloc s: float32[128, 64] sbuf;\n",
        ADD.format(a=names[0], b=names[-1]),
        STORE,
        "}\n",
    ]
    k = parse("".join(lines), "k.ir")
    return run_pipeline(k, parse_pipeline("interleaved-loads"), PassContext())


def _loads(k) -> list[Load]:
    return [s for s in nodes(k.body) if isinstance(s, Load)]


@pytest.mark.parametrize(
    ("offsets", "step"),
    [(["0", "1"], 2), (["1", "0"], 2), (["5", "3", "4"], 3), (["2 * C + 1", "2 * C"], 2)],
)
def test_loads_covering_every_offset_become_one(offsets: list[str], step: int) -> None:
    got = _run(offsets, step)
    (load,) = _loads(got)
    assert load.src.dims[1].step == 1 and str(load.src.dims[1].size.value) == str(64 * step)
    add = next(s for s in nodes(got.body) if type(s).__name__ == "TensorTensor")
    assert add.a.tensor == add.b.tensor == load.dst.tensor
    assert {add.a.dims[1].step, add.b.dims[1].step} == {step}
    if all(o.isdigit() for o in offsets):  # each tile reads its own offset of the wide tile
        low = min(int(o) for o in offsets)
        assert add.a.dims[1].start == Const(int(offsets[0]) - low)
        assert add.b.dims[1].start == Const(int(offsets[-1]) - low)


@pytest.mark.parametrize(
    ("offsets", "step"), [(["0", "2"], 2), (["0", "1"], 3), (["0", "C"], 2), (["0", "1", "1"], 2)]
)
def test_loads_leaving_gaps_or_unknown_offsets_stay(offsets: list[str], step: int) -> None:
    assert len(_loads(_run(offsets, step))) == len(offsets)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", ["stencil/avgpool2x2", "misc/rope"])
def test_even_odd_ports_load_each_range_once_and_match(rel: str, target: str, tmp_path) -> None:
    cu = CORPUS / f"{rel}.cu"
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")), target=target)
    strided = [s for s in _loads(res.ir_tiles) if s.src.dims[-1].step != 1]
    assert not strided, "an even/odd pair is still loaded by two strided DMAs"
    assert check_kernel(cu, target, tmp_path).status == "match"
