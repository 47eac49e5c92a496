"""A struct of device pointers copied to device memory once and passed as a pointer
(``const Params* p``; ``p->a[i]``, ``(*p).n``, ``p[0].b[i]``) becomes one parameter per
member, like a struct passed by value, where the kernel only reads that one record; the
launch's pointer argument gives each member the host value and allocation of the host struct
copied into it.  A kernel that writes a member, reads other records or passes the pointer on
keeps the parameter whole and is refused with that reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding
from cuda2nki.simt import run_kernel

COPY = """
struct Params { const float* a; float* b; int n; };
__global__ void copyk(const Params* __restrict__ p) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < READ_N) WRITE_B = 3.0f * READ_A;
}
"""

#: (n, b[i], a[i]) as the kernel spells them
READS = {
    "arrow": ("p->n", "p->b[i]", "p->a[i]"),
    "deref": ("(*p).n", "(*p).b[i]", "(*p).a[i]"),
    "first record": ("p[0].n", "p[0].b[i]", "p[0].a[i]"),
    "mixed": ("(*p).n", "p[0].b[i]", "p->a[i]"),
}


def _kernel(spelling: str) -> str:
    n, b, a = READS[spelling]
    return COPY.replace("READ_N", n).replace("WRITE_B", b).replace("READ_A", a)


@pytest.mark.parametrize("spelling", sorted(READS))
def test_the_pointer_becomes_one_parameter_per_member(spelling: str) -> None:
    (k,) = parse_source(_kernel(spelling), "k.cu").kernels
    assert [p.name for p in k.params] == ["p__a", "p__b", "p__n"]
    a, b, n = (p.ty for p in k.params)
    assert n.name == "int32" and not any(p.held_as_bytes for p in k.params)  # type: ignore[attr-defined]
    assert a.pointee.const and not b.pointee.const  # type: ignore[attr-defined]


HOST_COPY = """
int main() {
    int n = 700;
    Params h;
    h.n = n;
    cudaMalloc((void**)&h.a, n * sizeof(float));
    float* out;
    cudaMalloc(&out, n * sizeof(float));
    h.b = out;
    Params* d;
    cudaMalloc(&d, sizeof(Params));
    cudaMemcpy(d, &h, sizeof(Params), cudaMemcpyHostToDevice);
    copyk<<<(n + 127) / 128, 128>>>(d);
}
"""

HOST_POINTER = """
int main() {
    int n = 700;
    Params* hp = (Params*)malloc(sizeof(Params));
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    hp->a = x; hp->b = y; hp->n = n;
    Params* d;
    cudaMalloc(&d, sizeof(Params));
    cudaMemcpy(d, hp, sizeof(Params), cudaMemcpyHostToDevice);
    copyk<<<(n + 127) / 128, 128>>>(d);
}
"""

HOST_MANAGED = """
int main() {
    int n = 700;
    Params* m;
    cudaMallocManaged(&m, sizeof(Params));
    m->n = n;
    cudaMallocManaged((void**)&m->a, n * sizeof(float));
    cudaMallocManaged(&m->b, n * sizeof(float));
    copyk<<<(n + 127) / 128, 128>>>(m);
}
"""


@pytest.mark.parametrize(
    "host", [HOST_COPY, HOST_POINTER, HOST_MANAGED], ids=["copied", "host pointer", "managed"]
)
def test_each_member_takes_the_host_structs_value_and_allocation(host: str) -> None:
    src = _kernel("arrow") + host
    partial, diags = infer_binding(parse_source(src, "k.cu"), "copyk")
    p = partial["params"]
    assert p["p__n"] in (700, {"value": 700}), (p, [d.message for d in diags])
    assert p["p__a"]["role"] == "in" and p["p__b"]["role"] == "out"
    assert p["p__a"]["shape"] == ["p__n"] and p["p__b"]["shape"] == ["p__n"]
    bnd, diags = binding_from_inference(parse_source(src, "k.cu"), "copyk")
    assert bnd is not None, [d.message for d in diags]


NESTED = """
typedef struct { float* val; int* next; } Cells;
typedef struct { Cells cells; int n; float scale; } Grid;
__global__ void follow(Grid* g, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < g->n) out[i] = g->scale * g->cells.val[g->cells.next[i]];
}
int main() {
    int n = 2000;
    Grid hg;
    float *v, *o; int* nx;
    cudaMalloc(&v, 3 * n * sizeof(float));
    cudaMalloc(&nx, n * sizeof(int));
    cudaMalloc(&o, n * sizeof(float));
    hg.cells.val = v; hg.cells.next = nx; hg.n = n; hg.scale = 2.0f;
    Grid* dg;
    cudaMalloc((void**)&dg, sizeof(Grid));
    cudaMemcpy(dg, &hg, sizeof(Grid), cudaMemcpyHostToDevice);
    follow<<<(n + 255) / 256, 256>>>(dg, o);
}
"""


def test_a_nested_struct_of_pointers_behind_a_pointer() -> None:
    (k,) = parse_source(NESTED, "k.cu").kernels
    names = [p.name for p in k.params]
    assert names == ["g__cells__val", "g__cells__next", "g__n", "g__scale", "out"]
    partial, diags = infer_binding(parse_source(NESTED, "k.cu"), "follow")
    p = partial["params"]
    assert p["g__scale"] in (2.0, {"value": 2.0}), p
    assert p["g__cells__val"]["shape"] in ([6000], ["3*g__n"], ["3 * g__n"]), p
    assert p["out"]["shape"] == ["g__n"]


REFUSED = {
    "the kernel writes member 'n'": "if (i < p->n) p->b[i] = p->a[i]; if (i == 0) p->n = 0;",
    "the kernel increments member 'n'": "if (i < p->n) p->b[i] = p->a[i]; p->n++;",
    "pointer member 'a' in records other than the first of 'p'": (
        "if (i < p[1].n) p[1].b[i] = p[1].a[i];"
    ),
    "'p' passed to 'get'": "if (i < p->n) p->b[i] = get(p, i);",
}

REFUSED_SRC = """
struct Params { const float* a; float* b; int n; };
__device__ float get(Params* q, int i) { q->n = 0; return q->a[i]; }
__global__ void k(Params* p, float* other) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    BODY
    other[i] = 1.0f;
}
int main() {
    Params* d; float* o;
    cudaMalloc(&d, sizeof(Params));
    cudaMalloc(&o, 64 * sizeof(float));
    k<<<1, 64>>>(d, o);
}
"""


@pytest.mark.parametrize("why", sorted(REFUSED))
def test_a_struct_that_is_state_stays_whole_with_its_reason(why: str) -> None:
    src = REFUSED_SRC.replace("BODY", REFUSED[why])
    (k,) = parse_source(src, "k.cu").kernels
    assert [p.name for p in k.params] == ["p", "other"]
    assert why in k.params[0].held_as_bytes, k.params[0].held_as_bytes
    # the parameters after it still receive their own launch arguments
    partial, _ = infer_binding(parse_source(src, "k.cu"), "k")
    assert partial["params"]["other"]["shape"] == [64], partial["params"].get("other")


def test_a_struct_of_numbers_behind_a_pointer_is_still_an_array_of_records() -> None:
    src = """
struct Pt { float x; int y; };
__global__ void k(const Pt* p, float* o) { int i = threadIdx.x; o[i] = p[i].x + p[i].y; }
"""
    (k,) = parse_source(src, "k.cu").kernels
    assert [p.name for p in k.params] == ["p_x", "p_y", "o"]


@pytest.mark.slow
def test_migrate_checks_kernels_reading_a_struct_of_pointers(tmp_path: Path) -> None:
    import json

    from cuda2nki.batch.migrate import MigrateOptions, migrate

    src = tmp_path / "src"
    src.mkdir()
    (src / "copy.cu").write_text(_kernel("mixed") + HOST_COPY)
    (src / "grid.cu").write_text(NESTED)
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    got = {r["kernel"]: r for r in json.loads((out / "report.json").read_text())["kernels"]}
    assert set(got) == {"copyk", "follow"}
    for name, r in got.items():
        assert r["binding"] == "inferred" and not r["blocking"], (name, r)
        assert r["status"] in ("automatic", "literal") and r["numerics"] == "pass", (name, r)
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine"))
    seen = {
        r["kernel"]: r["status"] for r in json.loads((dry / "report.json").read_text())["kernels"]
    }
    assert seen == {k: r["status"] for k, r in got.items()}


LOCALS = {
    "local copy": "const Params q = *p; if (i < q.n) q.b[i] = 3.0f * q.a[i];",
    "local reference": "const Params& q = *p; if (i < q.n) q.b[i] = 3.0f * q.a[i];",
    "local pointer": "const Params* q = &p[0]; if (i < q->n) q->b[i] = 3.0f * q->a[i];",
    "local pointer, plain": "const Params* q = p; if (i < q->n) q->b[i] = 3.0f * (*q).a[i];",
}


@pytest.mark.parametrize("body", list(LOCALS.values()), ids=list(LOCALS))
def test_members_read_through_a_local_copy_pointer_or_reference(body: str) -> None:
    src = (
        "struct Params { const float* a; float* b; int n; };\n"
        "__global__ void copyk(const Params* p) {\n"
        "    int i = threadIdx.x + blockIdx.x * blockDim.x;\n"
        f"    {body}\n}}\n" + HOST_COPY
    )
    (k,) = parse_source(src, "k.cu").kernels
    assert [p.name for p in k.params] == ["p__a", "p__b", "p__n"], k.params[0].held_as_bytes
    partial, diags = infer_binding(parse_source(src, "k.cu"), "copyk")
    assert partial["params"]["p__b"]["shape"] in (["p__n"], [700]), [d.message for d in diags]


HELPERS = {
    "arrow": "__device__ float twice(const Params* q, int i) { return 2.0f * q->a[i]; }",
    "deref, first argument later": (
        "__device__ float twice(int i, const Params* __restrict__ q) { return (*q).a[i] * 2.0f; }"
    ),
}


@pytest.mark.parametrize("helper", list(HELPERS.values()), ids=list(HELPERS))
def test_a_helper_reading_the_struct_gets_a_variant_taking_its_members(helper: str) -> None:
    call = "twice(i, p)" if "int i, const" in helper else "twice(p, i)"
    src = (
        "struct Params { const float* a; float* b; int n; };\n"
        + helper
        + "\n__global__ void copyk(const Params* p) {\n"
        "    int i = threadIdx.x + blockIdx.x * blockDim.x;\n"
        f"    if (i < p->n) p->b[i] = {call};\n}}\n"
    )
    tu = parse_source(src, "k.cu")
    (k,) = tu.kernels
    assert [p.name for p in k.params] == ["p__a", "p__b", "p__n"], k.params[0].held_as_bytes
    a = np.arange(100, dtype=np.float32)
    args = {"p__a": a, "p__b": np.zeros(100, np.float32), "p__n": 90}
    out = run_kernel(tu, "copyk", grid=(1,), block=(128,), args=args)["p__b"]
    np.testing.assert_allclose(out, np.where(np.arange(100) < 90, 2 * a, 0))
