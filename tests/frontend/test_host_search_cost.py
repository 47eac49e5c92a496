"""Host-value evaluation answers its repeated questions from indexes built once: a launcher's
callers in the other files of the tree are searched once per launcher and parse (not once per
argument and launch), and a scope's declarations and assignments are walked once
(cuda2nki.frontend.declindex); the answers are those of a fresh walk."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import declindex, parse_file
from cuda2nki.frontend.cst import parse_bytes

# kernels launched by launchers whose sizes come from a caller in another file
KERNELS = """
__global__ void add_one(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1.0f;
}
__global__ void twice(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= 2.0f;
}
void run_steps(float* d, int len, int threads, int reps) {
    for (int r = 0; r < reps; r++) {
        add_one<<<(len + threads - 1) / threads, threads>>>(d, len);
        twice<<<(len + threads - 1) / threads, threads>>>(d, len);
        add_one<<<(len + threads - 1) / threads, threads>>>(d, len);
    }
}
"""
DRIVER = """
void run_steps(float* d, int len, int threads, int reps);
int main() {
    int elems = 5000;
    float* d;
    run_steps(d, elems, 128, 3);
    return 0;
}
"""


def test_a_launchers_foreign_callers_are_searched_once(tmp_path: Path, monkeypatch) -> None:
    from cuda2nki.frontend import callers

    (tmp_path / "steps.cu").write_text(KERNELS)
    (tmp_path / "driver.cpp").write_text(DRIVER)
    asked: list[str] = []
    real = callers.foreign_calls

    def counting(path: str | None, fname: str) -> list:
        asked.append(fname)
        return real(path, fname)

    monkeypatch.setattr(callers, "foreign_calls", counting)
    tu = parse_file(str(tmp_path / "steps.cu"))
    assert len(tu.launch_sites) == 3
    assert all(s.host is not None for s in tu.launch_sites)
    assert asked.count("run_steps") == 1  # three launches, two sizes each: one search


SCOPES = b"""
int g = 1;
void host(int n) {
    int a = 1;
    for (int i = 0; i < n; i++) { int a = i; a = a + 1; }
    int b = 2;
    b = 3;
    a = 4;
}
int h = 2;
"""


def test_the_indexes_answer_as_a_walk_does() -> None:
    from cuda2nki.frontend.hostsyntax import _first_assignment, _last_decl

    root = parse_bytes(SCOPES).root_node
    fn = next(c for c in root.children if c.type == "function_definition")
    text = SCOPES.decode()
    # the loop body's `a` shadows the first one up to the end of the loop
    kind, decl, _ = _last_decl(fn, "a", text.index("a = a + 1"))
    assert kind == "local" and decl.start_byte == text.index("int a = i")
    kind, decl, _ = _last_decl(fn, "i", text.index("a = i"))
    assert kind == "loop"
    assert _last_decl(fn, "b", text.index("int b")) is None
    assert _last_decl(root, "h", len(text), top=True) is not None
    assert _last_decl(root, "a", len(text), top=True) is None  # not inside functions
    right = _first_assignment(fn, "b", text.index("int b"), len(text))
    assert right is not None and right.text == b"3"
    assert _first_assignment(fn, "a", text.index("int b"), len(text)).text == b"4"
    # each scope was walked once for all of these questions
    assert sum(1 for k in declindex._decls if k[0] == fn.id) == 1


MEMBERS = b"""
struct Cfg { int rows; int cols; };
void setup(Cfg* c, Cfg& d) {
    c->rows = 64;
    d.cols = 32;
    c->cols = 48;
    d.rows = c->rows * 2;
}
"""


def test_member_assignments_are_indexed_once() -> None:
    from cuda2nki.frontend.hostmembers import _assignments

    root = parse_bytes(MEMBERS).root_node
    rows = [a.child_by_field_name("right").text for a in _assignments(root, "rows")]
    cols = [a.child_by_field_name("right").text for a in _assignments(root, "cols")]
    assert rows == [b"64", b"c->rows * 2"] and cols == [b"32", b"48"]  # source order
    assert _assignments(root, "depth") == []
    assert sum(1 for k in declindex._members if k[0] == root.id) == 1


# A struct passed by value whose members are copied, in kernel and host code alike, from
# subscripts of members of other variables: no assignment gives a value, and each reads a
# member that every other assignment of that member name may give.
COPIED_MEMBERS = """
struct Points { float* px; float* py; float* pz; };
struct Triple { float px; float py; float pz; };
__global__ void pair_dots(Points left, Points right, float* dots, int count) {
    __shared__ Triple cache[64];
    Triple mine, other;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    mine.px = left.px[t];
    mine.py = left.py[t];
    mine.pz = left.pz[t];
    cache[threadIdx.x].px = right.px[t];
    cache[threadIdx.x].py = right.py[t];
    cache[threadIdx.x].pz = right.pz[t];
    __syncthreads();
    other.px = cache[threadIdx.x].px;
    other.py = cache[threadIdx.x].py;
    other.pz = cache[threadIdx.x].pz;
    dots[t] = mine.px * other.px + mine.py * other.py + mine.pz * other.pz;
}
Points dev_a, dev_b;
void stage(int count, float* dots) {
    pair_dots<<<(count + 63) / 64, 64>>>(dev_a, dev_b, dots, count);
}
"""
# Sizes kept in struct members that are computed from one another in a cycle, read where an
# allocation size is evidence (no default is taken there, so every candidate fails).
CYCLIC_MEMBERS = """
#include <cstdio>
struct Dims { int len; int pad; };
Dims cur, prev, nxt, last;
__global__ void halve(float* buf, int len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) buf[i] *= 0.5f;
}
void load(FILE* f) {
    fscanf(f, "%d", &last.pad);
    cur.len = prev.len * 2;
    prev.len = nxt.len + last.pad;
    nxt.len = last.len - 1;
    last.len = cur.len / 2 + prev.len;
}
void run(float* buf) {
    cudaMalloc(&buf, cur.len * sizeof(float));
    halve<<<(cur.len + 127) / 128, 128>>>(buf, cur.len);
}
"""


@pytest.mark.parametrize(
    ("source", "kernel", "block"),
    [(COPIED_MEMBERS, "pair_dots", 64), (CYCLIC_MEMBERS, "halve", 128)],
)
def test_member_values_are_searched_in_polynomial_time(
    tmp_path: Path, monkeypatch, source: str, kernel: str, block: int
) -> None:
    """Each assignment to a member is evaluated once per depth: without that, the search for a
    member's value tried every assignment of the member at each of a dozen levels (minutes)."""
    from cuda2nki.frontend.hostvals import HostEvaluator

    calls = [0]
    real = HostEvaluator.eval

    def counting(self, n, s):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] > 20_000:
            raise RuntimeError("the host-value search does not end")
        return real(self, n, s)

    monkeypatch.setattr(HostEvaluator, "eval", counting)
    (tmp_path / "k.cu").write_text(source)
    tu = parse_file(str(tmp_path / "k.cu"))
    assert [k.name for k in tu.kernels] == [kernel]
    [site] = tu.launch_sites
    assert site.host is not None and site.host.block[0].value == block
    assert calls[0] < 2_000


# one host function allocates the buffers of many launches: each launch's pointers are looked up
# among the function's allocating, storing and copying nodes, indexed once per function
GATHER = """
__global__ void pick{k}(const float* tab, const int* idx, float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tab[idx[i]] * {k}.0f;
}}
"""


def _many_launches(kernels: int) -> str:
    body = ["int main() {", "    int n = 4096, rows = 300;"]
    for k in range(kernels):
        body += [
            f"    float *t{k}, *o{k};",
            f"    int* x{k};",
            f"    cudaMalloc(&t{k}, rows * sizeof(float));",
            f"    cudaMalloc((void**)&o{k}, n * sizeof(float));",
            f"    cudaMalloc(&x{k}, n * sizeof(int));",
            f"    cudaMemset(o{k}, 0, n * sizeof(float));",
        ]
    body += [f"    pick{k}<<<(n + 255) / 256, 256>>>(t{k}, x{k}, o{k}, n);" for k in range(kernels)]
    body += ["    return 0;", "}"]
    return "".join(GATHER.format(k=k) for k in range(kernels)) + "\n".join(body)


def test_a_host_function_is_walked_once_for_all_its_launches_pointers(monkeypatch) -> None:
    from cuda2nki.frontend import hostalloc, parse_source
    from cuda2nki.lift.infer import infer_binding

    walked: list[str] = []
    real = hostalloc._walk

    def counting(node):  # noqa: ANN001, ANN202
        walked.append(node.type)
        return real(node)

    monkeypatch.setattr(hostalloc, "_walk", counting)
    tu = parse_source(_many_launches(8), "gathers.cu")
    assert walked.count("function_definition") == 1  # 8 launches x 4 arguments: one walk
    for fn in tu.kernels:
        partial, _ = infer_binding(tu, fn.name)
        assert partial["params"]["tab"].get("shape") == [300]  # from its cudaMalloc
        assert partial["params"]["out"].get("shape") == ["n"]
    facts = [s.host for s in tu.launch_sites]
    assert all(f is not None and f.zeroed == (False, False, True, False) for f in facts)
