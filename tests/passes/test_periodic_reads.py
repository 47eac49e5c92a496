"""Table reads at an element's position modulo a constant (``g[i % C]``, ``g[(i & (C - 1)) + c]``)
in a 1-D map: flat chunks whose rows are whole periods, the table one DMA (every partition the
same ``C`` elements) widened on chip -- recognised ports, exact against the SIMT interpreter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cuda2nki.ir.nodes import Add, Const, Mod, Read, Sym
from cuda2nki.passes._periodic import period_of
from tests.port.acceptance import check_kernel

HERE = Path(__file__).parent / "cuda" / "periodic"


def test_periods_and_offsets_of_table_reads() -> None:
    i = Sym("i")
    assert period_of(Read("g", (Mod(i, Const(16)),)), "i", (Const(16),)) == (16, Const(0))
    assert period_of(Read("g", (Add(Const(4), Mod(i, Const(32))),)), "i", (Const(40),)) == (
        32,
        Const(4),
    )


def test_reads_that_are_not_a_whole_period_of_a_table() -> None:
    i = Sym("i")
    assert period_of(Read("g", (Mod(i, Const(16)),)), "i", (Const(12),)) is None  # past its end
    assert period_of(Read("g", (Mod(i, Const(16)),)), "i", (Sym("n"),)) is None  # unknown size
    assert period_of(Read("g", (Mod(i, Sym("c")),)), "i", (Const(16),)) is None  # no constant
    assert period_of(Read("g", (Mod(Sym("j"), Const(8)),)), "i", (Const(8),)) is None  # other axis
    assert period_of(Read("g", (Mod(i + Const(1), Const(8)),)), "i", (Const(8),)) is None  # turned
    assert period_of(Read("g", (Mod(i, Const(8)), i)), "i", (Const(8), Const(8))) is None


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "name",
    [
        "tap_scale",  # taps[i % 8], grid-stride loop, 256-thread blocks
        "masked_lut",  # lut[(e & 31) + 4] under a guard, in place
        "two_periods",  # a[t % 4] and b[t % 6] (rows of 12k), the position as a value
    ],
)
def test_periodic_table_reads_port_recognised_and_exact(name: str, target: str, tmp_path) -> None:
    for suffix in (".cu", ".toml"):
        shutil.copy(HERE / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    out = check_kernel(tmp_path / f"{name}.cu", target, tmp_path)
    assert out.status == "match", out


def test_the_table_is_read_and_widened_once_for_every_chunk(tmp_path) -> None:
    """One DMA of the table and one widening, in front of the chunk loops (whole, partial and
    one-row chunks all read a corner of it), not one per chunk."""
    from cuda2nki.binding import load_binding
    from cuda2nki.pipeline import port_file

    cu = HERE / "tap_scale.cu"
    res = port_file(cu, binding=load_binding(cu.with_suffix(".toml")))
    assert res.source is not None and not res.literal
    src = res.source.split("@nki.jit", 1)[1]
    assert src.count("taps.ap(") == 1 and src.count("tensor_copy(") == 1, src
    first_chunk = src.index("for t")
    assert src.index("taps.ap(") < first_chunk and src.index("tensor_copy(") < first_chunk


def test_periods_without_a_small_common_multiple_fall_back(tmp_path) -> None:
    """Tables of periods 509 and 511 would need rows of 260099 elements: no schedule (C2N2501),
    the port falls back to the literal lowering, still exact."""
    cu = tmp_path / "coprime.cu"
    cu.write_text(
        "__global__ void coprime(const float* a, const float* b, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = a[i % 509] + b[i % 511];\n}\n"
    )
    cu.with_suffix(".toml").write_text(
        'kernel = "coprime"\n[launch]\ngrid = ["ceil_div(n, 128)"]\nblock = [128]\n[params]\n'
        'a = { shape = [509], dtype = "float32", role = "in" }\n'
        'b = { shape = [511], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 1200\n'
    )
    out = check_kernel(cu, "nki", tmp_path)
    assert out.status == "literal", out
