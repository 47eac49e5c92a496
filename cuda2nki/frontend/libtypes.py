"""Types of the CUDA device-side libraries: cuComplex / cuFFT complex numbers and cuRAND states.

``cuFloatComplex`` (alias ``cuComplex``, ``cufftComplex``) *is* ``float2`` in cuComplex.h, and
``cuDoubleComplex`` (``cufftDoubleComplex``) is ``double2``; ``cufftReal`` is ``float``.  They
are typed as those vector types, so every use of a ``float2`` works on them.

A cuRAND generator state is a plain struct of 32-bit words that kernels copy by value between
global memory and registers (``curandState s = states[id]; ... states[id] = s;``).  The front
end types each as a vector of ``uint32`` named after the struct, laid out as the library lays it
out (so that ``sizeof`` and the arrays of states on the host agree):

* ``curandStateXORWOW`` (``curandState``, ``curandState_t``): 12 words: ``d``, ``v[5]``, the two
  Box-Muller flags, the float extra, a pad word and the double extra (48 bytes);
* ``curandStatePhilox4_32_10``: 16 words: ``ctr`` (4), ``output`` (4), ``key`` (2), ``STATE``,
  the two flags, the float extra and the double extra (64 bytes);
* ``curandStateSobol32``: 35 words: ``i``, ``x``, ``c`` and the 32 direction vectors.

The generators themselves are the interpreter's (:mod:`cuda2nki.simt.curand`).

DirectXMath's storage types, which CUDA–Direct3D interop kernels write vertices with
(``struct Vertex { XMFLOAT3 position; XMFLOAT4 color; }``), are vectors of ``x``, ``y``, ``z``,
``w`` laid out as DirectXMath lays them out: ``XMFLOAT2``/``3``/``4``, ``XMINT*`` and ``XMUINT*``
are aligned to their element (``XMFLOAT4`` is 16 bytes aligned to 4, unlike ``float4``), the
``...A`` variants to 16 bytes.
"""

from __future__ import annotations

from cuda2nki.frontend.ast import ArrayType, CType, ScalarType, VectorType

_F32, _F64, _U32 = (ScalarType(name=n) for n in ("float32", "float64", "uint32"))
FLOAT2 = VectorType(name="float2", base=_F32, width=2)
DOUBLE2 = VectorType(name="double2", base=_F64, width=2)

COMPLEX_TYPES: dict[str, CType] = {
    "cuFloatComplex": FLOAT2,
    "cuComplex": FLOAT2,
    "cufftComplex": FLOAT2,
    "cuDoubleComplex": DOUBLE2,
    "cufftDoubleComplex": DOUBLE2,
    "cufftReal": _F32,
    "cufftDoubleReal": _F64,
}

XORWOW = VectorType(name="curandStateXORWOW", base=_U32, width=12, align=8)
PHILOX = VectorType(name="curandStatePhilox4_32_10", base=_U32, width=16, align=16)
SOBOL32 = VectorType(name="curandStateSobol32", base=_U32, width=35, align=4)
RNG_STATES = {t.name: t for t in (XORWOW, PHILOX, SOBOL32)}

CURAND_TYPES: dict[str, CType] = {
    "curandState": XORWOW,
    "curandState_t": XORWOW,
    "curandStateXORWOW": XORWOW,
    "curandStateXORWOW_t": XORWOW,
    "curandStatePhilox4_32_10": PHILOX,
    "curandStatePhilox4_32_10_t": PHILOX,
    "curandStateSobol32": SOBOL32,
    "curandStateSobol32_t": SOBOL32,
    "curandDirectionVectors32_t": ArrayType(elem=_U32, dims=(32,)),
}

_I32 = ScalarType(name="int32")
DIRECTX_TYPES: dict[str, CType] = {
    f"{prefix}{n}{suffix}": VectorType(
        name=f"{prefix}{n}{suffix}", base=base, width=n, align=16 if suffix else 4
    )
    for prefix, base, suffixes in (
        ("XMFLOAT", _F32, ("", "A")),
        ("XMINT", _I32, ("",)),
        ("XMUINT", _U32, ("",)),
    )
    for n in (2, 3, 4)
    for suffix in suffixes
}

LIBRARY_TYPES: dict[str, CType] = {**COMPLEX_TYPES, **CURAND_TYPES, **DIRECTX_TYPES}


def rng_state(t: CType | None) -> VectorType | None:
    """The cuRAND state type ``t`` is (const or not), else None."""
    if isinstance(t, VectorType) and t.name in RNG_STATES and t.base == _U32:
        return RNG_STATES[t.name]
    return None
