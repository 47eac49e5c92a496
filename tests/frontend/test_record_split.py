"""Arrays of structs whose members differ in type become one array per member (structure of
arrays): the member's dtype, the array's shape, nested structs flattened with joined names, an
array member an extra axis; the interpreter still takes the C bytes (alignment, padding)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.lift.hostargs import slots
from cuda2nki.simt import run_kernel

#: one kernel body per spelling of a member access through the struct array ``ps``
SPELLINGS = {
    "dot": "if (i < n) { ps[i].x = ps[i].x + d; o[i] = ps[i].y * (float)ps[i].cell; }",
    "arrow_offset": "if (i < n) { (ps + i)->x += d; o[i] = (ps + i)->y * (ps + i)->cell; }",
    "arrow_address": "if (i < n) { (&ps[i])->x += d; o[i] = (&ps[i])->y * (&ps[i])->cell; }",
    "local_pointer": "if (i < n) { Part* q = ps + i; q->x += d; o[i] = q->y * q->cell; }",
    "reference": "if (i < n) { Part& r = ps[i]; r.x += d; o[i] = r.y * r.cell; }",
    "grid_stride": (
        "for (int k = i; k < n; k += blockDim.x * gridDim.x) {"
        " Part* q = &ps[k]; q->x = q->x + d; o[k] = q->y * (float)q->cell; }"
    ),
    "copy": "if (i < n) { Part p = ps[i]; p.x += d; ps[i] = p; o[i] = p.y * p.cell; }",
}

HEAD = "struct Part { char flag; float x; double y; int cell; };\n"  # padded: 1+3, 4, 8, 4+4


def _kernel(body: str) -> str:
    return (
        HEAD + "__global__ void step(Part* ps, float* o, int n, float d) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    " + body + "\n}\n"
    )


def _parts(n: int) -> np.ndarray:
    """``n`` records in the C layout of ``Part`` (padding bytes set to a pattern)."""
    dt = np.dtype(
        {
            "names": ["flag", "x", "y", "cell"],
            "formats": ["u1", "f4", "f8", "i4"],
            "offsets": [0, 4, 8, 16],
            "itemsize": 24,
        }  # fmt: skip
    )
    raw = np.full(n * 24, 0xA5, np.uint8)
    rec = raw.view(dt)
    rec["flag"] = 1
    rec["x"] = np.linspace(-2, 2, n)
    rec["y"] = np.linspace(3, 5, n)
    rec["cell"] = np.arange(n) % 7 - 3
    return raw


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_members_become_arrays_at_their_c_offsets(spelling: str) -> None:
    tu = parse_source(_kernel(SPELLINGS[spelling]), "k.cu")
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    got = {p.name: (p.ty.pointee.name, p.record, p.record_at) for p in k.params if p.record}
    copied = {"ps_flag": ("int8", "ps", (0, 24, 1))} if spelling == "copy" else {}
    assert got == {
        **copied,
        "ps_x": ("float32", "ps", (4, 24, 1)),
        "ps_y": ("float64", "ps", (8, 24, 1)),
        "ps_cell": ("int32", "ps", (16, 24, 1)),
    }
    assert not any(isinstance(n, A.Name) and n.name == "ps" for n in _names(k.body))


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_bytes_in_and_out_follow_the_c_layout(spelling: str) -> None:
    tu = parse_source(_kernel(SPELLINGS[spelling]), "k.cu")
    n = 77
    raw = _parts(n)
    args = {"ps": raw, "o": np.zeros(n, np.float32), "n": n, "d": 0.25}
    out = run_kernel(tu, "step", grid=(2,), block=(64,), args=args)
    rec = raw.view(np.uint8).reshape(n, 24)
    new = out["ps"].view(np.uint8).reshape(n, 24)
    x = rec[:, 4:8].copy().view(np.float32)[:, 0]
    y = rec[:, 8:16].copy().view(np.float64)[:, 0]
    cell = rec[:, 16:20].copy().view(np.int32)[:, 0]
    np.testing.assert_array_equal(new[:, 4:8].copy().view(np.float32)[:, 0], x + np.float32(0.25))
    np.testing.assert_array_equal(out["o"], (y * cell).astype(np.float32))
    untouched = np.r_[0:4, 8:24]  # the flag, its padding, y, cell and the tail padding
    np.testing.assert_array_equal(new[:, untouched], rec[:, untouched])
    # the member arrays give the same numbers
    members = {"ps_x": x, "ps_y": y, "ps_cell": cell, "o": np.zeros(n, np.float32), "n": n,
               "d": 0.25}  # fmt: skip
    if spelling == "copy":  # a whole record copied: every member read and written
        members["ps_flag"] = rec[:, 0].view(np.int8).copy()
    split = run_kernel(tu, "step", grid=(2,), block=(64,), args=members)
    np.testing.assert_array_equal(split["o"], out["o"])
    np.testing.assert_array_equal(split["ps_x"], x + np.float32(0.25))


NESTED = """
struct Vel { float u; float v; };
struct Body { float3 pos; Vel vel; float w[3]; short tag; bool live; };
__global__ void drift(const Body* __restrict__ b, float* e, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    float s = 0.0f;
    for (int q = 0; q < 3; ++q) s += b[j].w[q];
    e[j] = b[j].live ? s * b[j].pos.y + b[j].vel.v * (float)b[j].tag : 0.0f;
}
"""


def test_nested_vector_and_array_members() -> None:
    tu = parse_source(NESTED, "k.cu")
    (k,) = tu.kernels
    got = {p.name: (str(p.ty.pointee.name), p.record_at) for p in k.params if p.record}
    # float3 at 0 (12 bytes), Vel (a record of two floats) at 12, w[3] at 20, tag 32, live 34
    assert got == {
        "b_pos": ("float3", (0, 36, 1)),
        "b_vel": ("Vel", (12, 36, 1)),
        "b_w": ("float32", (20, 36, 3)),
        "b_tag": ("int16", (32, 36, 1)),
        "b_live": ("bool", (34, 36, 1)),
    }
    assert all(p.ty.pointee.const for p in k.params if p.record)
    m = 40
    dt = np.dtype(
        {
            "names": ["pos", "vel", "w", "tag", "live"],
            "formats": [("f4", 3), ("f4", 2), ("f4", 3), "i2", "u1"],
            "offsets": [0, 12, 20, 32, 34],
            "itemsize": 36,
        }  # fmt: skip
    )
    rec = np.zeros(m, dt)
    rng = np.random.default_rng(3)
    rec["pos"] = rng.normal(size=(m, 3))
    rec["vel"] = rng.normal(size=(m, 2))
    rec["w"] = rng.normal(size=(m, 3))
    rec["tag"] = np.arange(m) - 20
    rec["live"] = np.arange(m) % 3 != 0
    args = {"b": rec.view(np.uint8), "e": np.zeros(m, np.float32), "m": m}
    out = run_kernel(tu, "drift", grid=(1,), block=(64,), args=args)["e"]
    s = np.zeros(m, np.float32)
    for q in range(3):
        s = (s + rec["w"][:, q]).astype(np.float32)
    want = s * rec["pos"][:, 1] + rec["vel"][:, 1] * rec["tag"].astype(np.float32)
    np.testing.assert_allclose(out, np.where(rec["live"] != 0, want, 0), rtol=1e-6)


REFUSED = {
    "an anonymous member, a union": "struct S { union { float u; int i; }; int k; };",
    "bit field 'a'": "struct S { unsigned a : 3; float u; int k; };",
    "pointer member 'p'": "struct S { float* p; float u; int k; };",
    "member 't', an array of several dimensions or of nested arrays": (
        "struct T { int a; float b[2]; };\nstruct S { T t[4]; float u; int k; };"
    ),
}


PLAIN = "struct S { float u; int k; };"
READ = "\n__global__ void g(S* s, float* o) { int i = threadIdx.x; o[i] = s[i].u + s[i].k; }"


@pytest.mark.parametrize("why", sorted(REFUSED))
def test_what_has_no_member_arrays_stays_bytes(why: str) -> None:
    (plain,) = parse_source(PLAIN + READ, "k.cu").kernels
    assert [p.name for p in plain.params] == ["s_u", "s_k", "o"]
    (k,) = parse_source(REFUSED[why] + READ, "k.cu").kernels
    assert [p.name for p in k.params] == ["s", "o"] and not any(p.record for p in k.params)
    assert why in k.params[0].held_as_bytes  # the refusal names the reason


def test_a_struct_array_passed_on_stays_bytes() -> None:
    read = "__global__ void g(const Part* ps, float* o) { int i = threadIdx.x; o[i] = "
    (plain,) = parse_source(HEAD + read + "ps[i].x + ps[i].y; }", "k.cu").kernels
    assert [p.name for p in plain.params] == ["ps_x", "ps_y", "o"]
    helper = "__device__ float get(const Part* p, int i) { return p[i].x; }\n"
    (k,) = parse_source(HEAD + helper + read + "get(ps, i) + ps[i].y; }", "k.cu").kernels
    assert [p.name for p in k.params] == ["ps", "o"]
    assert k.params[0].held_as_bytes == "'ps' passed to 'get' (line 3)"


def test_the_launch_argument_reaches_every_member() -> None:
    src = _kernel(SPELLINGS["dot"]) + (
        "int main() { int n = 5000; Part* d_p; float* d_o;\n"
        "  cudaMalloc(&d_p, n * sizeof(Part)); cudaMalloc(&d_o, n * sizeof(float));\n"
        "  step<<<(n + 255) / 256, 256>>>(d_p, d_o, n, 0.5f); }\n"
    )
    tu = parse_source(src, "k.cu")
    (k,) = tu.kernels
    (site,) = tu.launch_sites
    got = [(s.param, s.arg, s.part) for s in slots(k, site)]
    assert got == [("ps_x", 0, True), ("ps_y", 0, True), ("ps_cell", 0, True),
                   ("o", 1, False), ("n", 2, False), ("d", 3, False)]  # fmt: skip
    assert [s.alloc(site.host) is None for s in slots(k, site)][:4] == [True, True, True, False]


def _names(x: object) -> list[object]:
    from cuda2nki.rewrite import nodes

    return list(nodes(x))


HELD = """
struct Star { float at[3]; float speed[3]; float weight; };
__global__ void advance(Star* __restrict__ s, float* __restrict__ ke, const int n, float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    KIND me = s[i];
    for (int c = 0; c < 3; ++c) me.at[c] += me.speed[c] * dt;
    ke[i] = me.weight * (me.speed[0] * me.speed[0] + me.speed[2]);
    s[i] = me;
}
"""


@pytest.mark.parametrize("kind", ["auto", "Star"])
def test_a_struct_held_in_a_local_is_one_local_per_member(kind: str) -> None:
    tu = parse_source(HELD.replace("KIND", kind), "k.cu")
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    got = {p.name: p.record_at for p in k.params if p.record}
    assert got == {"s_at": (0, 28, 3), "s_speed": (12, 28, 3), "s_weight": (24, 28, 1)}
    n = 50
    rng = np.random.default_rng(5)
    raw = rng.normal(size=n * 7).astype(np.float32)
    args = {"s": raw, "ke": np.zeros(n, np.float32), "n": n, "dt": 0.5}
    out = run_kernel(tu, "advance", grid=(1,), block=(64,), args=args)
    rec = raw.reshape(n, 7)
    want = rec.copy()
    want[:, 0:3] = rec[:, 0:3] + rec[:, 3:6] * np.float32(0.5)
    np.testing.assert_array_equal(out["s"].reshape(n, 7), want)
    ke = rec[:, 6] * (rec[:, 3] * rec[:, 3] + rec[:, 5])
    np.testing.assert_allclose(out["ke"], ke, rtol=1e-6)


def test_a_nested_struct_of_mixed_members_flattens_to_joined_names() -> None:
    src = """
struct In { float lo; int k; };
struct Out { In span; bool a; };
__global__ void g(const Out* c, float* o) {
    int i = threadIdx.x;
    o[i] = c[i].a ? c[i].span.lo * c[i].span.k : 0.0f;
}"""
    (k,) = parse_source(src, "k.cu").kernels
    got = [(p.name, p.record_at) for p in k.params]
    assert got == [("c_span_lo", (0, 12, 1)), ("c_span_k", (4, 12, 1)), ("c_a", (8, 12, 1)),
                   ("o", ())]  # fmt: skip


def test_the_literal_refusal_names_why_the_struct_stays_bytes(tmp_path) -> None:
    from cuda2nki.pipeline import port_file

    src = (
        "struct Tag { char* label; int hits; };\n"
        "__global__ void bump(Tag* t, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) t[i].hits += 1;\n}\n"
        "int main() { int n = 300; Tag* d; cudaMalloc(&d, n * sizeof(Tag));\n"
        "  bump<<<(n + 127) / 128, 128>>>(d, n); }\n"
    )
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    res = port_file(cu, lowering="literal")
    got = [d.message for d in res.diagnostics if d.code == "C2N2301"]
    assert got and "pointer member 'label'" in got[0], got


BOXES = """
struct Nbr { int id; float w; };
struct Box { int count; int off; Nbr nbr[4]; };
__global__ void gather_boxes(const Box* __restrict__ boxes, const float* v, float* out, int nb) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    float s = 0.0f;
    for (int k = 0; k < 4; k++) {
        if (k >= boxes[b].count) break;
        s += boxes[b].nbr[k].w * v[boxes[b].nbr[k].id];
    }
    out[b] = s + (float)boxes[b].off;
}
int main() { int nb = 500; Box* d_b; float *d_v, *d_o;
  cudaMalloc(&d_b, nb * sizeof(Box)); cudaMalloc(&d_v, nb * sizeof(float));
  cudaMalloc(&d_o, nb * sizeof(float));
  gather_boxes<<<(nb + 127) / 128, 128>>>(d_b, d_v, d_o, nb); }
"""


def test_an_array_member_of_structs_is_one_strided_array_per_inner_member() -> None:
    from cuda2nki.lift.infer import infer_binding

    tu = parse_source(BOXES, "k.cu")
    (k,) = tu.kernels
    got = {p.name: p.record_at for p in k.params if p.record}
    assert got == {"boxes_count": (0, 40, 1), "boxes_off": (4, 40, 1),
                   "boxes_nbr_id": (8, 40, 4, 8), "boxes_nbr_w": (12, 40, 4, 8)}  # fmt: skip
    nb = 9
    raw = np.zeros(nb * 40, np.uint8)
    rec = np.zeros(nb, np.dtype({"names": ["count", "off"], "formats": ["i4", "i4"],
                                 "offsets": [0, 4], "itemsize": 40}))  # fmt: skip
    rec["count"] = np.arange(nb) % 5
    rec["off"] = np.arange(nb) * 10
    raw[:] = rec.view(np.uint8)
    pairs = raw.reshape(nb, 40)[:, 8:].copy().view(np.dtype([("id", "i4"), ("w", "f4")]))
    pairs["id"] = (np.arange(nb * 4).reshape(nb, 4) * 7) % nb
    pairs["w"] = np.linspace(-1, 1, nb * 4).reshape(nb, 4)
    raw.reshape(nb, 40)[:, 8:] = pairs.view(np.uint8)
    v = np.linspace(2, 3, nb).astype(np.float32)
    args = {"boxes": raw, "v": v, "out": np.zeros(nb, np.float32), "nb": nb}
    out = run_kernel(tu, "gather_boxes", grid=(1,), block=(128,), args=args)["out"]
    want = np.zeros(nb, np.float32)
    for b in range(nb):
        s = np.float32(0)
        for q in range(rec["count"][b] if rec["count"][b] < 4 else 4):
            s = np.float32(s + pairs["w"][b, q] * v[pairs["id"][b, q]])
        want[b] = s + np.float32(rec["off"][b])
    np.testing.assert_array_equal(out, want)
    # the members' extents: the record count, and [records, 4] for the inner members
    # a loop bounded by data: the accesses do not bound the inner members
    loop = "for (int k = 0; k < 4; k++) {\n        if (k >= boxes[b].count) break;"
    assert loop in BOXES
    tu = parse_source(BOXES.replace(loop, "for (int k = 0; k < boxes[b].count; k++) {"), "k.cu")
    binding, _ = infer_binding(tu, "gather_boxes")
    shapes = {n: p.get("shape") for n, p in binding["params"].items() if n.startswith("boxes")}
    assert shapes == {"boxes_count": ["nb"], "boxes_off": ["nb"], "boxes_nbr_id": ["nb", 4],
                      "boxes_nbr_w": ["nb", 4]}  # fmt: skip


#: a record's words read through a cast of its address: element ``w`` may lie in any member,
#: so the array is not split (it stays bytes, with the reason)
WORDS = {
    "address-of": "((const unsigned*)&recs[i])[w]",
    "pointer-sum": "((const unsigned*)(recs + i))[w]",
    "constant-past-member": "reinterpret_cast<const unsigned*>(&recs[i])[4]",
}


@pytest.mark.parametrize("case", sorted(WORDS))
def test_words_read_through_a_cast_keep_the_record_whole(case: str) -> None:
    src = f"""
struct Lut {{ unsigned int vals[4]; float wt; }};
__global__ void words(const Lut* recs, unsigned* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int w = threadIdx.x % 5;
    if (i < n) out[i] = {WORDS[case]} + recs[i].vals[1];
}}
"""
    fn = parse_source(src, "w.cu").function("words")
    assert fn is not None
    recs = next(p for p in fn.params if p.name == "recs")
    assert recs.held_as_bytes, [p.name for p in fn.params]
