"""Kernel parameters of vector or record type taken by value are read as small input tensors
of their lanes (:mod:`cuda2nki.frontend.vecparams`): the ports match the SIMT interpreter."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from tests.port.test_literal_vectors import _kernel, _matches

PORTED = {
    # a float2 line fit taken by value beside a scalar
    "float2_coefficients": """
__global__ void r(const float* x, float* y, const float2 coef, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * coef.y + coef.x;
}
""",
    # a record of three floats, passed whole to a helper and read by members
    "record_to_helper": """
struct Aff { float s, t, u; };
__device__ float apply(Aff a, float v) { return a.s * v * v + a.t * v + a.u; }
__global__ void r(const float* x, float* y, int n, Aff a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { Aff b = a; y[i] = apply(b, x[i]) - a.u; }
}
""",
    # an int4 of offsets, lanes chosen by a loop index
    "int4_lane_loop": """
__global__ void r(const float* x, float* y, int4 off, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  int o[4] = {off.x, off.y, off.z, off.w};
  for (int k = 0; k < 4; k++) s += x[(i + o[k]) % n];
  y[i] = s;
}
""",
}


#: the tensor each kernel's by-value parameter is bound as (its lanes)
_LANES = {
    "float2_coefficients": 'coef = { shape = ["2"], dtype = "float32", role = "in" }',
    "record_to_helper": 'a = { shape = ["3"], dtype = "float32", role = "in" }',
    "int4_lane_loop": 'off = { shape = ["4"], dtype = "int32", role = "in" }',
}


@pytest.mark.parametrize("name", sorted(PORTED))
def test_by_value_vector_parameters_port_and_match(tmp_path, name):
    cu = _kernel(tmp_path, PORTED[name])
    toml = cu.with_suffix(".toml")
    toml.write_text(toml.read_text().replace("[params]\n", f"[params]\n{_LANES[name]}\n"))
    _matches(cu, tmp_path)


def test_a_by_value_vector_becomes_a_tensor_of_its_lanes_unless_written():
    tu = parse_source(
        "__global__ void k(float* y, const float4 c, float2 w) {\n"
        "  w.x += 1.0f; y[threadIdx.x] = c.z + w.x; }\n",
        "t.cu",
    )
    c, w = tu.kernels[0].params[1:]
    assert c.by_value and c.extent == 4
    assert c.ty == A.PointerType(pointee=A.ScalarType(name="float32", const=True))
    assert not w.by_value and isinstance(w.ty, A.VectorType)  # its own copy is written


def test_the_lanes_are_the_shape_evidence_of_the_tensor():
    from cuda2nki.lift.allocshape import from_declarations

    tu = parse_source(PORTED["record_to_helper"], "t.cu")
    fn = next(f for f in tu.kernels if f.name == "r")
    shapes: dict = {}
    diags: list = []
    from_declarations(fn, shapes, "r", diags)
    assert shapes == {"a": [3]}
    assert "a vector taken by value" in diags[0].message
