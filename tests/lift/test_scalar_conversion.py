"""A host value passed for a narrow integer parameter is the value C converts it to at the
call (``1024`` for a ``char`` is ``0``): the kernel computes with that one, so the binding's
default is it, with a note."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

#: parameter type, host value, the value the kernel sees
CASES = {
    "char-from-a-large-int": ("char", "1024", 0),
    "unsigned-char-from-a-negative": ("unsigned char", "-1", 255),
    "short-past-its-range": ("short", "40000", 40000 - 65536),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_host_value_is_converted_to_the_parameters_type(case: str) -> None:
    ty, host_value, seen = CASES[case]
    src = f"""
__global__ void stamp({ty}* buf, int n, {ty} v) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buf[i] = v;
}}
int main() {{
    int n = 512;
    int mark = {host_value};
    {ty}* d;
    cudaMalloc(&d, n * sizeof({ty}));
    stamp<<<(n + 127) / 128, 128>>>(d, n, mark);
    return 0;
}}"""
    partial, diags = infer_binding(parse_source(src, "stamp.cu"), "stamp")
    assert partial["params"]["v"] == seen
    note = next(d for d in diags if d.message.startswith(f"inferred v = {seen} "))
    assert "converted" in note.message
