"""A buffer a launch takes from a thrust vector (``thrust::raw_pointer_cast(&v[0])``,
``v.data()``, ``v.data().get()``) has the vector's size: ``device_vector<T> v(n)`` holds ``n``
elements of ``T``, the evidence for a table that the kernel's accesses do not bound."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
__global__ void pick(const {t}* table, const int* ids, {t}* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[ids[i]];
}}
"""

HOSTS = {
    "alias_of_element_zero": """
void run(int n) {{
    const int rows = 40;
    thrust::device_vector<{t}> d_table(rows * 3, 0);
    thrust::device_vector<int> d_ids(n);
    thrust::device_vector<{t}> d_out(n);
    {t}* table = thrust::raw_pointer_cast(&d_table[0]);
    pick<<<(n + 127) / 128, 128>>>(table, thrust::raw_pointer_cast(d_ids.data()),
                                  thrust::raw_pointer_cast(d_out.data()), n);
}}
""",
    "data_in_the_launch": """
int main() {{
    int n = 1000, rows = 40;
    thrust::device_vector<{t}> lut(rows * 3);
    thrust::device_vector<int> keys(n);
    thrust::device_vector<{t}> res(n);
    pick<<<n / 250, 250>>>(thrust::raw_pointer_cast(lut.data()), keys.data().get(),
                           reinterpret_cast<{t}*>(thrust::raw_pointer_cast(res.data())), n);
    return 0;
}}
""",
    "assigned_later": """
#define ROWS 40
void run(int n) {{
    int rows = ROWS;
    {t}* table;
    thrust::universal_vector<{t}> storage(3 * rows, ({t})1);
    table = storage.data().get();
    int* ids; cudaMalloc(&ids, n * sizeof(int));
    {t}* out; cudaMalloc(&out, n * sizeof({t}));
    pick<<<(n + 63) / 64, 64>>>(table, ids, out, n);
}}
""",
    "launcher_of_a_vector_assigned_from_the_host": """
void launch(thrust::device_vector<{t}>& v, thrust::device_vector<int>& k,
            thrust::device_vector<{t}>& o, int n) {{
    {t}* t = thrust::raw_pointer_cast(&v[0]);
    pick<<<(n + 31) / 32, 32>>>(t, thrust::raw_pointer_cast(k.data()),
                                thrust::raw_pointer_cast(o.data()), n);
}}
int main() {{
    int n = 100;
    thrust::host_vector<{t}> h_table(120);
    thrust::device_vector<{t}> d_table;
    thrust::device_vector<int> keys(n);
    thrust::device_vector<{t}> out(n);
    d_table = h_table;
    launch(d_table, keys, out, n);
    return 0;
}}
""",
}


@pytest.mark.parametrize("t", ["float", "double"])
@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_thrust_vector_sizes_the_buffer(host: str, t: str) -> None:
    tu = parse_source(KERNEL.format(t=t) + HOSTS[host].format(t=t), "k.cu")
    bnd, diags = binding_from_inference(tu, "pick")
    assert bnd is not None, [d.message for d in diags]
    shape = tuple(bnd.tensor("table").shape)
    assert shape == (120,)
    assert any("'table' shape" in d.message and "_vector<" in d.message for d in diags)


def test_a_vector_copied_from_another_is_not_sized_by_a_constructor() -> None:
    src = """
__global__ void pick2(const float* sized, const float* copied, const int* ids, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = sized[ids[i]] + copied[ids[i]];
}
void run(thrust::host_vector<float>& h, int n) {
    thrust::device_vector<float> d_sized(90, 1.0f);
    thrust::device_vector<float> d_copied = h;
    thrust::device_vector<int> d_ids(n);
    thrust::device_vector<float> d_out(n);
    pick2<<<(n + 127) / 128, 128>>>(thrust::raw_pointer_cast(d_sized.data()),
        thrust::raw_pointer_cast(d_copied.data()), thrust::raw_pointer_cast(d_ids.data()),
        thrust::raw_pointer_cast(d_out.data()), n);
}
"""
    bnd, diags = binding_from_inference(parse_source(src, "k.cu"), "pick2")
    assert bnd is not None and tuple(bnd.tensor("sized").shape) == (90,)
    assert tuple(bnd.tensor("copied").shape) == (64,)
    assert any("'copied' shape [64]" in d.message and "a default" in d.message for d in diags)
