"""``__mul24``/``__umul24`` and conversions of per-thread integers to types narrower than 32
bits in literal ports: exact on uniform values, trace-time indices and data alike, on both
targets (the interpreter runs the CUDA side with C's semantics)."""

from __future__ import annotations

import pytest

from tests.port.acceptance import assert_ports_exactly, grid_binding, map_kernel, tensor_param

_SHAPES = [{"n": 131}, {"n": 7}]


def _bind(out_dtype: str = "int32", block: int = 64) -> dict:
    return grid_binding(
        [f"ceil_div(n, {block})"],
        {
            "a": tensor_param(["n"], "in", "int32", [-(2**30), 2**30]),
            "x": tensor_param(["n"], "in", "float32", [-300.0, 300.0]),
            "o": tensor_param(["n"], "out", out_dtype),
            "n": 1000,
        },
        _SHAPES,
        block=block,
    )


def _kernel(body: str, out_ty: str = "int") -> str:
    return map_kernel(body, f"const int* a, const float* x, {out_ty}* o, int n", "o")


MUL24 = [
    ("signed_of_data", "__mul24(a[i], a[(i + 1) % n])"),
    ("unsigned_of_data", "(int)__umul24(a[i], 77777u)"),
    ("block_offset_then_thread", "x[__mul24(blockIdx.x, blockDim.x) + threadIdx.x] > 0.0f"),
    ("unsigned_block_offset", "a[__umul24(blockDim.x, blockIdx.x) + threadIdx.x] & 255"),
    ("thread_times_index", "__mul24(threadIdx.x, i - 500) + a[i]"),
    ("negative_data_times_index", "__mul24(a[i] >> 6, 3 - i)"),
    ("uniform_only", "__umul24(n, 1 << 20) + __mul24(-n, 5)"),
    ("constant_operands", "__mul24(16777215, 3) + (int)__umul24(0x1000001u, 7u)"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), MUL24, ids=[m[0] for m in MUL24])
def test_mul24_ports_exactly(name, body, target, tmp_path) -> None:
    assert_ports_exactly(f"mul24/{name}", _kernel(body), _bind(), target, tmp_path, literal_ok=True)


NARROW = [
    ("uchar_of_data", "int", "(unsigned char)a[i]"),
    ("schar_of_data_shifted", "int", "(signed char)(a[i] >> 3)"),
    ("short_of_data", "int", "(short)(a[i] * 3)"),
    ("ushort_of_data_sum", "int", "(unsigned short)(a[i] + i)"),
    ("char_of_index_product", "int", "(char)(i * 37)"),
    # with a __mul24 beside it, which keeps the kernel on the literal path
    ("uchar_of_float", "int", "(unsigned char)(x[i] * 2.0f) + __mul24(a[i], 0)"),
    ("short_of_float", "int", "(short)(x[i] * 300.0f) ^ __mul24(a[i], 3)"),
    ("schar_of_float_uniform", "int", "(signed char)(n * 1.5f) + __mul24(i, 2)"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "ty", "body"), NARROW, ids=[c[0] for c in NARROW])
def test_narrowing_conversions_port_exactly(name, ty, body, target, tmp_path) -> None:
    assert_ports_exactly(
        f"narrow/{name}", _kernel(body, ty), _bind(), target, tmp_path, literal_ok=True
    )


STORES = [
    ("uchar_store_of_comparison", "unsigned char", "uint8", "x[i] <= x[(i + 3) % n]"),
    ("uchar_store_of_shifted_data", "unsigned char", "uint8", "a[i] >> 4"),
    ("char_store_of_data", "char", "int8", "a[i] - i"),
    ("short_store_of_data", "short", "int16", "a[i] / 3"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "cty", "dt", "body"), STORES, ids=[s[0] for s in STORES])
def test_stores_to_narrow_buffers_port_exactly(name, cty, dt, body, target, tmp_path) -> None:
    assert_ports_exactly(
        f"store/{name}", _kernel(body, cty), _bind(dt), target, tmp_path, literal_ok=True
    )
