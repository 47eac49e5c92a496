"""Compare-exchange through reference parameters at shared-memory positions computed from the
thread index in unsigned arithmetic (sorting networks): literal ports keep those positions
known at trace time, wrapped modulo 2**32 as C's unsigned arithmetic is, and port exactly."""

from __future__ import annotations

import pytest

from tests.port.acceptance import assert_ports_exactly, grid_binding, map_kernel, tensor_param


def _net(elem: str, helper: str, call: str, pos: str, up: str, step: str) -> str:
    return (
        f"{helper}\n"
        f"__global__ void k({elem}* out, const {elem}* in, unsigned int n, unsigned int dir) {{\n"
        f"    __shared__ {elem} buf[256];\n"
        "    unsigned int base = blockIdx.x * 256;\n"
        "    buf[threadIdx.x] = in[base + threadIdx.x];\n"
        "    buf[threadIdx.x + 128] = in[base + threadIdx.x + 128];\n"
        f"    unsigned int up = {up};\n"
        f"    {step} {{\n"
        "        __syncthreads();\n"
        f"        unsigned int pos = {pos};\n"
        f"        {call};\n"
        "    }\n"
        "    __syncthreads();\n"
        "    out[base + threadIdx.x] = buf[threadIdx.x];\n"
        "    out[base + threadIdx.x + 128] = buf[threadIdx.x + 128];\n"
        "}\n"
    )


_SWAP_U = (
    "__device__ inline void cmp_swap(unsigned int &a, unsigned int &b, unsigned int d) {\n"
    "    unsigned int t;\n"
    "    if ((a > b) == d) { t = a; a = b; b = t; }\n"
    "}\n"
)
_SWAP_F = (
    "__device__ void order(float& lo, float& hi, bool ascending) {\n"
    "    if (ascending ? lo > hi : lo < hi) { float keep = hi; hi = lo; lo = keep; }\n"
    "}\n"
)

NETWORKS = [
    (
        "uint_halving_strides",
        "uint32",
        _net(
            "unsigned int",
            _SWAP_U,
            "cmp_swap(buf[pos + 0], buf[pos + s], up)",
            "2 * threadIdx.x - (threadIdx.x & (s - 1))",
            "dir ^ ((threadIdx.x & 32) != 0)",
            "for (unsigned int s = 128; s > 0; s >>= 1)",
        ),
    ),
    (
        "uint_growing_strides",
        "uint32",
        _net(
            "unsigned int",
            _SWAP_U,
            "cmp_swap(buf[pos], buf[pos + s], up)",
            "2 * threadIdx.x - (threadIdx.x & (s - 1))",
            "dir",
            "for (unsigned int s = 1; s < 256; s <<= 1)",
        ),
    ),
    (
        "float_bool_direction",
        "float32",
        _net(
            "float",
            _SWAP_F,
            "order(buf[pos], buf[pos + s], up != 0)",
            "(threadIdx.x / s) * 2 * s + threadIdx.x % s",
            "(threadIdx.x & 16) == 0",
            "for (unsigned int s = 64; s >= 1; s /= 2)",
        ),
    ),
]


def _bind(dtype: str) -> dict:
    rng = [0, 1000] if dtype == "uint32" else None
    return grid_binding(
        ["n / 256"],
        {
            "in": tensor_param(["n"], "in", dtype, rng),
            "out": tensor_param(["n"], "out", dtype),
            "n": 512,
            "dir": 1,
        },
        [{"n": 512}, {"n": 256}],
        block=128,
    )


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "dtype", "src"), NETWORKS, ids=[w[0] for w in NETWORKS])
def test_reference_swaps_at_index_positions_port_exactly(name, dtype, src, target, tmp_path):
    assert_ports_exactly(f"net/{name}", src, _bind(dtype), target, tmp_path, literal_ok=True)


_BIND = grid_binding(
    ["ceil_div(n, 64)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1000},
    [{"n": 131}, {"n": 7}],
    block=64,
)

# unsigned index arithmetic that wraps, then compared, shifted or gathered at
UNSIGNED = [
    ("wrapped_difference_shifted", "(float)((threadIdx.x - 3u) >> 30) + x[i]"),
    ("wrapped_product_masked", "x[((unsigned)i * 2654435761u) % (unsigned)n]"),
    ("wrapped_quotient", "x[((threadIdx.x - 7u) / 3u) % (unsigned)n]"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), UNSIGNED, ids=[u[0] for u in UNSIGNED])
def test_unsigned_index_arithmetic_ports_exactly(name, body, target, tmp_path) -> None:
    src = map_kernel(body)
    assert_ports_exactly(f"uidx/{name}", src, _BIND, target, tmp_path, 1e-6, literal_ok=True)
