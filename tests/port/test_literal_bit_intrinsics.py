"""CUDA's 32-bit integer intrinsics in literal ports, bit-exact against the SIMT interpreter:
``umin``/``umax`` compare as unsigned, ``__popc``/``__ffs``/``__clz``/``__brev`` count and
reverse the bits of per-thread data (negative patterns included), of index values and of
uniform values (a loop bounded by ``__ffs`` of the launch's stride)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

TARGETS = ["nki", "legacy"]
_PARAMS = "const int* a, const int* b, int* y, int n"

#: kernel bodies (``i`` is the global thread index, ``i < n`` guards the store)
BODIES = {
    "umin_of_data": "    if (i < n) y[i] = umin((unsigned)a[i], (unsigned)b[i]);\n",
    "umax_with_uniform": "    unsigned int lim = (unsigned)n * 1000u;\n"
    "    if (i < n) y[i] = (int)umax((unsigned)a[i], lim);\n",
    "umin_moving_position": "    unsigned int pos = 0;\n"
    "    for (unsigned int s = 8; s > 0; s >>= 1) {\n"
    "        unsigned int next = umin(pos + s, (unsigned)n);\n"
    "        if (a[next - 1] < b[i % n]) pos = next;\n"
    "    }\n"
    "    if (i < n) y[i] = (int)pos;\n",
    "popc_of_data": "    if (i < n) y[i] = __popc(a[i]) + 100 * __popc(b[i] ^ a[i]);\n",
    "ffs_of_data": "    if (i >= n) return;\n    int v = a[i] & b[i];\n    y[i] = __ffs(v);\n",
    "clz_of_data": "    if (i < n) { unsigned int u = (unsigned)a[i]; y[i] = __clz(u >> (i % 7)); }\n",
    "brev_of_data": "    if (i < n) y[i] = (int)__brev((unsigned)a[i]);\n",
    "bit_counts_of_index": "    int g = i ^ (i >> 1);\n"
    "    if (i < n) y[i] = __popc(g) * 64 + __ffs(i) * 8 + __clz(i + 1) - (int)(__brev(i) >> 28);\n",
    "loop_bounded_by_ffs": "    int stride = gridDim.x * blockDim.x;\n"
    "    unsigned int g = i ^ (i >> 1);\n"
    "    unsigned int x = 0;\n"
    "    for (int k = 0; k < __ffs(stride) - 1; k++) {\n"
    "        x ^= (0u - (g & 1u)) & (unsigned)b[k];\n"
    "        g >>= 1;\n"
    "    }\n"
    "    if (i < n) y[i] = (int)x;\n",
}


def _port(name: str, target: str, tmp: Path):
    rng = [-(2**31), 2**31 - 1]
    params = {
        "a": tensor_param(["n"], "in", "int32", rng),
        "b": tensor_param(["n"], "in", "int32", rng),
        "y": tensor_param(["n"], "out", "int32"),
        "n": 300,
    }
    bdict = grid_binding(["ceil_div(n, 128)"], params, [{"n": 300}, {"n": 130}], block=128)
    cu = tmp / f"{name}.cu"
    cu.write_text(
        f"__global__ void k({_PARAMS}) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + BODIES[name] + "}\n"
    )
    return run_literal_exactly(cu, bdict, target, tmp)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(BODIES))
def test_bit_intrinsics_port_exactly(name, target, tmp_path) -> None:
    run, points = _port(name, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
