"""Template kernels that nothing instantiates (:mod:`cuda2nki.frontend.assumedinst`): they are
instantiated with assumed arguments (a type as ``float``, an integer without a default as 128,
else 32), each with a note (C2N2100) at the kernel naming the arguments, so that they can be
bound, ported and checked.  ``--template`` values and defaults keep precedence; a kernel that a
launch site names, or whose ``--template`` value does not fit, assumes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

_F32 = A.ScalarType(name="float32")

#: template head, kernel parameters, body, --template values -> expected arguments, assumed
ASSUMED = {
    "typename-only": (
        "template <typename T>",
        "T* out, const T* in, int n",
        "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] * (T)2;",
        {},
        (("T", _F32),),
        "T=float32 was assumed",
    ),
    "block-size-and-class-grid-stride": (
        "template <int BS, class V> __launch_bounds__(BS)",
        "V* out, const V* in, int n",
        "for (int i = blockIdx.x * BS + threadIdx.x; i < n; i += gridDim.x * BS) out[i] = in[i];",
        {},
        (("BS", 128), ("V", _F32)),
        "BS=128, V=float32 were assumed",
    ),
    "default-kept-for-one": (
        "template <typename Real, unsigned TILE = 4>",
        "Real* y, int n",
        "int i = threadIdx.x + blockIdx.x * blockDim.x; "
        "if (i < n) { Real s = 0; for (unsigned t = 0; t < TILE; ++t) s += y[i]; y[i] = s; }",
        {},
        (("Real", _F32), ("TILE", 4)),
        "Real=float32 was assumed",
    ),
    "option-given-for-the-type": (
        "template <bool SQUARE, typename T>",
        "T* p, int n",
        "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = SQUARE ? p[i] * p[i] : p[i];",
        {"T": "double"},
        (("SQUARE", 1), ("T", A.ScalarType(name="float64"))),
        "SQUARE=1 was assumed",
    ),
}


@pytest.mark.parametrize("spelling", sorted(ASSUMED))
def test_a_template_nothing_instantiates_takes_assumed_arguments(spelling: str) -> None:
    head, params, body, templates, args, said = ASSUMED[spelling]
    src = f"{head}\n__global__ void k({params}) {{ {body} }}\n"
    tu = parse_source(src, "t.cu", templates=templates)
    (k,) = tu.kernels
    assert k.name == "k" and k.template_args == args, k.template_args
    notes = [d for d in tu.diagnostics if d.code == "C2N2100"]
    assert len(notes) == 1 and notes[0].loc.line == k.loc.line, tu.diagnostics
    assert said in notes[0].message and "--template" in notes[0].message, notes[0].message
    assert not any(d.code == "C2N1023" for d in tu.diagnostics)
    bnd, diags = binding_from_inference(tu, "k")
    assert bnd is not None, [d.message for d in diags]


def test_a_launched_template_assumes_nothing() -> None:
    """The launch's arguments come from a host template: nothing is assumed for the kernel."""
    src = """
template <typename T> __global__ void k(T* p, int n) { if (threadIdx.x < n) p[threadIdx.x] = 1; }
template <typename U> void host(U* p, int n) { k<U><<<1, 128>>>(p, n); }
"""
    tu = parse_source(src, "t.cu")
    assert not any(d.code == "C2N2100" for d in tu.diagnostics), tu.diagnostics
    assert all(not k.template_args for k in tu.kernels)


def test_an_unfitting_option_is_reported_not_replaced() -> None:
    src = "template <int N> __global__ void k(float* p) { p[threadIdx.x] = N; }\n"
    tu = parse_source(src, "t.cu", templates={"N": "float"})
    assert [d.code for d in tu.diagnostics] == ["C2N1024", "C2N1023"]


def test_the_assumed_kernels_port_and_check(tmp_path: Path) -> None:
    from cuda2nki.batch.migrate import MigrateOptions, migrate

    src = tmp_path / "src"
    src.mkdir()
    heads = [ASSUMED[s] for s in ("typename-only", "block-size-and-class-grid-stride")]
    text = "".join(
        f"{h}\n__global__ void k{j}({p}) {{ {b} }}\n" for j, (h, p, b, *_) in enumerate(heads)
    )
    (src / "lib.cuh").write_text(text)
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True, timeout=600))
    recs = {r["kernel"]: r for r in res.records}
    assert set(recs) == {"k0", "k1"}, recs
    for r in recs.values():
        assert r["status"] in ("automatic", "literal") and r["verdict"] == "pass", r
