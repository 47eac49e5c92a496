"""Reinterpretation intrinsics of integer constants are the floating-point constants their bits
spell (:mod:`cuda2nki.frontend.constbits`)."""

from __future__ import annotations

import numpy as np

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source


def _inits(body: str) -> list[A.Expr]:
    tu = parse_source(
        "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
        f"__global__ void k(float* y, int n) {{ {body} }}\n",
        "t.cu",
    )
    fn = tu.kernels[0]
    return [s.init for s in fn.body.body if isinstance(s, A.VarDecl)]


def test_constant_bits_become_constants():
    got = _inits(
        "__half a = __ushort_as_half((unsigned short)0x3c00U);"
        "__half b = __short_as_half(0xC000);"
        "__nv_bfloat16 c = __ushort_as_bfloat16((unsigned short)0x3f80U);"
        "float d = __int_as_float(0x40490fdb);"
        "float e = __uint_as_float(0u);"
    )
    assert all(isinstance(e, A.FloatLit) for e in got)
    assert [e.value for e in got[:3]] == [1.0, -2.0, 1.0]
    assert [e.ty.name for e in got] == ["float16", "float16", "bfloat16", "float32", "float32"]
    assert got[3].value == float(np.float32(np.pi))
    assert got[4].value == 0.0


def test_variable_bits_and_infinities_stay_calls():
    got = _inits(
        "__half a = __ushort_as_half((unsigned short)n);"
        "__half b = __ushort_as_half((unsigned short)0x7c00U);"
        "float c = __int_as_float(0x7fc00000);"
    )
    assert all(isinstance(e, A.Call) for e in got)
