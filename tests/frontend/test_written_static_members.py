"""A ``static constexpr`` member of a template struct read in host code through the instance
written in place (``Pack<float>::size``, not through a typedef) gives the launch geometry its
value: the struct's member under the written template arguments."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
typedef float real;
template <class E>
struct Pack {
    static constexpr const size_t size = sizeof(int4) / sizeof(E);
    E payload[size];
};
__global__ void twice(float* dst, const float* src, int count) {
    for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < count; g += blockDim.x * gridDim.x)
        dst[g] = src[g] + src[g];
}
"""

#: spelling -> (the expression for the threads per warp row, the block it gives)
CASES = {
    "through_a_typedef_argument": ("Pack<real>::size", [32, 2, 2]),
    "a_builtin_argument": ("Pack<double>::size", [32, 4, 1]),
    "a_narrow_type": ("Pack<short>::size", [32, 1, 4]),
    "a_parenthesised_read": ("(Pack<unsigned long long>::size)", [32, 4, 1]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_written_instance_member_sizes_the_block(case: str) -> None:
    member, block = CASES[case]
    host = f"""
void run(float* d, const float* s, int count, int block_size) {{
    int per = max(1, count / {member} / 32);
    int warps = block_size / 32;
    int bz = max(1, warps / per);
    twice<<<(count + 127) / 128, dim3(32, warps / bz, bz)>>>(d, s, count);
}}
int main() {{ float *d, *s; run(d, s, 256, 128); return 0; }}
"""
    tu = parse_source(KERNEL + host, "t.cu")
    bnd, diags = binding_from_inference(tu, "twice")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert list(bnd.block) == block
