"""Texts and keys of symbolic values are bounded: a value is a DAG (registers each the sum of
two earlier ones) whose text unfolds exponentially, so ``short`` stops at its limit and an
opaque atom is named by a digest of the DAG (cuda2nki.lift.values)."""

from __future__ import annotations

from pathlib import Path

from cuda2nki.lift import values as V
from cuda2nki.pipeline import port_file


def _ladder(steps: int, a: str = "r0", b: str = "r1") -> V.DExpr:
    x: V.DExpr = V.Carried("float32", a)
    y: V.DExpr = V.Carried("float32", b)
    for _ in range(steps):
        x = V.Op("float32", "add", (x, y))
        y = V.Op("float32", "add", (y, x))
    return y


def test_short_is_bounded_on_a_dag_whose_tree_is_exponential() -> None:
    e = _ladder(60)  # about 2**83 nodes unfolded
    text = V.short(e, 300)
    assert text.endswith("...") and len(text) <= 303
    assert text.startswith("add(add(add(")
    small = V.Op("float32", "mul", (V.Scalar("float32", "a"), V.Const("float32", 2.0)))
    assert V.short(small, 300) == V.short(small) == "mul(a, 2.0)"


def test_digest_is_stable_and_tells_dags_apart() -> None:
    assert V.digest(_ladder(60)) == V.digest(_ladder(60))
    assert V.digest(_ladder(60)) != V.digest(_ladder(61))
    assert V.digest(_ladder(60)) != V.digest(_ladder(60, "s0", "s1"))
    assert len(V.digest(_ladder(3))) == 16


def test_opaque_atoms_of_long_values_are_named_by_digest() -> None:
    key = V.opaque_of(_ladder(60)).key
    assert key.startswith("data:add(") and "...#" in key and len(key) < 2100
    assert key == V.opaque_of(_ladder(60)).key != V.opaque_of(_ladder(59)).key
    assert V.opaque_of(V.Scalar("int32", "n")).key == "data:n"


LADDER = """__global__ void {name}(float* out, float a, float b, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float {x} = a, {y} = b;
  for (int k = 0; k < 3; k++) {{
{steps}
  }}
  if (i < n) out[i] = {x} * 1e-9f + {y} * 1e-9f;
}}
void run(float* out, int n) {{ {name}<<<(n + 127) / 128, 128>>>(out, 0.5f, 0.25f, n); }}
"""


def test_a_register_ladder_in_a_loop_is_analysed_and_ported(tmp_path: Path) -> None:
    for name, x, y in (("ladder", "r0", "r1"), ("chain", "va", "vb")):
        steps = "\n".join(f"    {x} = {x} + {y}; {y} = {y} + {x};" for _ in range(20))
        cu = tmp_path / f"{name}.cu"
        cu.write_text(LADDER.format(name=name, x=x, y=y, steps=steps))
        res = port_file(cu)
        assert res.source is not None and res.literal
        why = [d.message for d in res.diagnostics if d.code == "C2N2011"]
        assert why and all(len(m) < 600 for m in why)
