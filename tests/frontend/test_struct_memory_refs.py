"""Structs in memory reached through a file-scope ``__shared__`` array or a reference
(``S& r = p[i];``): their members are read in place; what stays unsupported is a diagnostic
at its line, never an internal error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

# a struct of 4 uint32 lookup entries and a float weight (20 bytes), three spellings
TABLES = {
    "typedef": "typedef struct Lut { unsigned vals[4]; float wt; } Lut;",
    "plain": "struct Lut { unsigned int vals[4]; float wt; };",
    "anonymous": "typedef struct { unsigned vals[2][2]; float wt; } Lut;",
}


def _table_kernel(spelling: str, staged: str) -> str:
    read = "vals[(j) / 2][(j) % 2]" if spelling == "anonymous" else "vals[j]"
    return f"""{TABLES[spelling]}
#define NTAB 2
__shared__ Lut staged[NTAB];
__global__ void lookup(const Lut* luts, float* res, int count) {{
    int t = threadIdx.x;
    if (t < NTAB) {staged};
    __syncthreads();
    int j = t & 3;
    if (t < count) res[t] = staged[t % NTAB].{read} * staged[t % NTAB].wt;
}}
"""


def _luts() -> np.ndarray:
    raw = np.arange(10, dtype=np.uint32).reshape(2, 5)
    raw[:, 4] = np.array([0.5, 2.0], np.float32).view(np.uint32)
    return raw


@pytest.mark.parametrize("spelling", sorted(TABLES))
@pytest.mark.parametrize(
    "staged",
    [
        "staged[t] = luts[t]",
        "for (int w = 0; w < 5; w++) ((unsigned*)&(staged[t]))[w] = ((const unsigned*)&luts[t])[w]",
    ],
)
def test_file_scope_shared_array_of_structs(tmp_path: Path, spelling: str, staged: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(_table_kernel(spelling, staged))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    raw = _luts()
    got = run_kernel(
        tu,
        "lookup",
        grid=(1,),
        block=(8,),
        args={"luts": raw.reshape(-1).view(np.uint8), "res": np.zeros(8, np.float32), "count": 7},
    )["res"]
    t = np.arange(8)
    wt = raw[:, 4].view(np.float32)
    want = raw[t % 2, t & 3].astype(np.float32) * wt[t % 2]
    want[7] = 0.0
    np.testing.assert_array_equal(got, want)


REFS = {
    "ref": ("Rec& r = recs[i];", "r.inner.w + r.count"),
    "const_ref": ("const Rec& r = recs[i];", "r.inner.w + r.count"),
    "auto_ref": ("auto& r = recs[i];", "r.inner.w + r.count"),
    "ref_of_deref": ("Rec &r = *(recs + i);", "r.count + r.inner.w"),
}


@pytest.mark.parametrize("spelling", sorted(REFS))
def test_reference_to_a_struct_in_memory(tmp_path: Path, spelling: str) -> None:
    decl, expr = REFS[spelling]
    path = tmp_path / "k.cu"
    path.write_text(
        f"""struct Inner {{ int tag; float w; }};
struct Rec {{ Inner inner; int count; }};
__global__ void total(Rec* recs, float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        {decl}
        out[i] = {expr};
        {"" if "const" in decl else "r.count += 1;"}
    }}
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    recs = np.zeros((5, 3), np.int32)
    recs[:, 1] = np.arange(5, dtype=np.float32).view(np.int32)
    recs[:, 2] = [10, 20, 30, 40, 50]
    got = run_kernel(
        tu,
        "total",
        grid=(2,),
        block=(4,),
        args={"recs": recs.reshape(-1).view(np.uint8), "out": np.zeros(5, np.float32), "n": 5},
    )
    np.testing.assert_array_equal(got["out"], np.arange(5) + recs[:, 2])
    bump = 0 if "const" in decl else 1
    np.testing.assert_array_equal(got["recs"].view(np.int32).reshape(5, 3)[:, 2], recs[:, 2] + bump)


@pytest.mark.parametrize(
    "use",
    ["Rec& r = local; out[0] = r.inner.w;", "Rec loc2 = local; Rec& r = loc2; out[0] = r.count;"],
)
def test_reference_to_a_struct_variable_is_a_located_refusal(tmp_path: Path, use: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""struct Inner {{ int tag; float w; }};
struct Rec {{ Inner inner; int count; }};
__global__ void k(float* out) {{
    Rec local; local.count = 1; local.inner.w = 2.0f;
    {use}
}}
"""
    )
    tu = parse_file(path)
    ds = tu.rejected["k"]
    assert ds[0].code == "C2N1025" and ds[0].loc.line == 5, ds
    assert all(d.code != "C2N0005" for d in tu.diagnostics)


def test_a_front_end_invariant_broken_is_reported_at_its_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cuda2nki.frontend.lower import BodyLowerer

    def broken(self: object, node: object) -> object:
        raise AssertionError

    from cuda2nki.frontend.cst import kind_ids

    table = list(BodyLowerer._stmt_by_id)
    for k in kind_ids("while_statement"):
        table[k] = broken
    monkeypatch.setattr(BodyLowerer, "_stmt_by_id", table)
    path = tmp_path / "k.cu"
    path.write_text(
        """__global__ void k(float* out, int n) {
    int i = threadIdx.x;
    while (i < n) { out[i] = 1.0f; i += blockDim.x; }
}
__global__ void fine(float* out) { out[threadIdx.x] = 2.0f; }
"""
    )
    monkeypatch.delenv("CUDA2NKI_DEBUG", raising=False)
    tu = parse_file(path)
    (d,) = [d for d in tu.diagnostics if d.code == "C2N0005"]
    assert (d.loc.line, d.loc.col) == (3, 5) and "AssertionError" in d.message
    assert "k" in tu.rejected and "fine" not in tu.rejected


def test_a_front_end_invariant_broken_outside_statements_is_reported_at_the_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cuda2nki.frontend.unit import UnitContext

    real = UnitContext._params

    def params(self: UnitContext, low: object, fnode: object) -> object:
        if b"broken" in (fnode.text or b""):  # type: ignore[attr-defined]
            raise KeyError("no such member")
        return real(self, low, fnode)

    monkeypatch.setattr(UnitContext, "_params", params)
    monkeypatch.delenv("CUDA2NKI_DEBUG", raising=False)
    path = tmp_path / "k.cu"
    path.write_text(
        """__global__ void fine(float* out) { out[threadIdx.x] = 2.0f; }

__global__ void broken(float* out) { out[threadIdx.x] = 1.0f; }
"""
    )
    tu = parse_file(path)
    (d,) = tu.rejected["broken"]
    assert d.code == "C2N0005" and (d.loc.line, d.loc.col) == (3, 1) and "KeyError" in d.message
    assert "fine" not in tu.rejected
