"""The searches over a launch's pointer arguments (their allocations, a zero fill before the
launch) list a host function's candidate nodes once per kind of search, not once per pointer
(a launch of many buffers walked the whole function for each), and still find each buffer's
own allocation."""

from __future__ import annotations

from collections import Counter

import cuda2nki.frontend.hostalloc as hostalloc
from cuda2nki.frontend import parse_source

_N = 12


def _source() -> str:
    params = ", ".join(f"const float* g{k}" for k in range(_N))
    reads = " + ".join(f"g{k}[j]" for k in range(_N))
    allocs = "\n".join(
        f"    float* d{k}; cudaMalloc((void**)&d{k}, ({k} + 2) * n * sizeof(float));"
        for k in range(_N)
    )
    args = ", ".join(f"d{k}" for k in range(_N))
    return f"""__global__ void gather_sum(float* out, const int* idx, int n, {params}) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{ int j = idx[i]; out[i] = {reads}; }}
}}
void host(int n, int m) {{
    float* out; int* idx;
    cudaMalloc(&out, n * sizeof(float));
    cudaMalloc(&idx, n * sizeof(int));
{allocs}
    gather_sum<<<(n + 127) / 128, 128>>>(out, idx, n, {args});
}}
"""


def test_a_host_function_is_walked_once_per_search_not_per_pointer(monkeypatch):
    roots: Counter = Counter()
    real = hostalloc._walk

    def counted(node):  # type: ignore[no-untyped-def]
        if node.type == "function_definition":
            roots[node.start_byte] += 1
        return real(node)

    monkeypatch.setattr(hostalloc, "_walk", counted)
    tu = parse_source(_source(), "gather.cu")
    assert tu.rejected == {}, tu.diagnostics
    assert roots and max(roots.values()) <= 2, roots  # allocations, zero fills


def test_each_pointer_still_gets_its_own_allocation():
    from cuda2nki.lift.infer import infer_binding

    tu = parse_source(_source(), "gather.cu")
    data, _ = infer_binding(tu, "gather_sum")
    shapes = {p: v.get("shape") for p, v in data["params"].items() if isinstance(v, dict)}
    assert shapes["out"] == ["n"] and shapes["idx"] == ["n"]
    assert [shapes[f"g{k}"] for k in range(_N)] == [[f"{k + 2}*n"] for k in range(_N)]
