"""Pointers declared without an initialiser and assigned later at the same level: literal
ports bind them at the assignment; a read before it, or a first assignment inside a branch, is
refused by name."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import assert_ports_exactly, grid_binding, tensor_param

_BIND = grid_binding(
    ["ceil_div(n, 32)", "4"],
    {
        "a": tensor_param(["4 * n"], "in"),
        "o": tensor_param(["4 * n"], "out"),
        "n": 1000,
    },
    [{"n": 70}, {"n": 9}],
    block=32,
)


def _kernel(body: str) -> str:
    return (
        "__global__ void k(const float* a, float* o, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"{body}"
        "}\n"
    )


DEFERRED = [
    (
        "row_pointers_then_guard",
        "    const float *src;\n    float *dst;\n"
        "    src = a + blockIdx.y * n;\n    dst = o + blockIdx.y * n;\n"
        "    if (i < n) dst[i] = src[i] * 2.0f;\n",
    ),
    (
        "declared_together_assigned_by_thread",
        "    const float *p, *q;\n    p = a + blockIdx.y * n + i;\n    q = a + (3 - blockIdx.y) * n;\n"
        "    if (i < n) o[blockIdx.y * n + i] = *p - q[i];\n",
    ),
    (
        "assigned_after_a_guard_then_moved",
        "    if (i >= n) return;\n    float *out;\n    out = o + blockIdx.y * n;\n"
        "    out += i;\n    *out = a[blockIdx.y * n + i] + 1.0f;\n",
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), DEFERRED, ids=[d[0] for d in DEFERRED])
def test_pointers_assigned_after_declaration_port_exactly(name, body, target, tmp_path) -> None:
    src = _kernel(body)
    assert_ports_exactly(f"deferred/{name}", src, _BIND, target, tmp_path, literal_ok=True)


REFUSED = [
    (
        "read_before_assignment",
        "    float *p;\n    if (i < n) o[i] = p[i];\n",
        "pointer 'p' read before it is assigned",
    ),
    (
        "first_assigned_in_a_branch",
        "    const float *p;\n    if (blockIdx.y == 0) { p = a; } else { p = a + n; }\n"
        "    if (i < n) o[i] = p[i];\n",
        "pointer 'p' first assigned inside a branch or loop",
    ),
]


@pytest.mark.parametrize(("name", "body", "why"), REFUSED, ids=[r[0] for r in REFUSED])
def test_unassigned_pointers_are_refused_by_name(name, body, why, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_kernel(body))
    binding = binding_from_dict({"kernel": "k", **_BIND}, path=str(cu))
    res = port_file(cu, binding=binding, lowering="literal")
    assert res.source is None
    assert any(why in d.message for d in res.diagnostics), [d.message for d in res.diagnostics]
