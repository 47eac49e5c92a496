"""A host launcher called through a function pointer that holds it — an array of pointers
(``tab[i](...)``), a pointer variable (``run(...)``, ``(*run)(...)``) set by its declaration or an
assignment, also as an arm of a conditional — receives that call's arguments exactly as from a
direct call: the launch geometry and the sizes come from them."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNELS = """
__global__ void twice(float* dst, const float* src, int count) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < count) dst[g] = src[g] + src[g];
}
__global__ void negate(float* dst, const float* src, int count) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < count) dst[g] = -src[g];
}
void launch_twice(float* d, const float* s, int n, int bs) { twice<<<(n + bs - 1) / bs, bs>>>(d, s, n); }
void launch_negate(float* d, const float* s, int n, int bs) {
    negate<<<(n + bs - 1) / bs, bs>>>(d, s, n);
}
typedef void (*launcher_t)(float*, const float*, int, int);
"""

#: spelling -> (host code, {kernel: (block, count)})
CASES = {
    "initialised_table": (
        """
int main() {
    float *d, *s;
    void (*tab[])(float*, const float*, int, int) = {launch_twice, launch_negate};
    for (int i = 0; i < 2; i++) tab[i](d, s, 1000, 256);
    return 0;
}
""",
        {"twice": (256, 1000), "negate": (256, 1000)},
    ),
    "table_assigned_item_by_item": (
        """
launcher_t versions[2];
int main() {
    float *d, *s;
    versions[0] = launch_twice;
    versions[1] = &launch_negate;
    for (int v = 0; v < 2; ++v) { (*versions[v])(d, s, 4096, 64); }
    return 0;
}
""",
        {"twice": (64, 4096), "negate": (64, 4096)},
    ),
    "typedef_variable": (
        """
int main() {
    float *d, *s;
    launcher_t run = launch_twice;
    run(d, s, 777, 32);
    return 0;
}
""",
        {"twice": (32, 777)},
    ),
    "auto_pointer_dereferenced": (
        """
void go(float* d, const float* s) {
    auto fn = &launch_negate;
    (*fn)(d, s, 2048, 512);
}
""",
        {"negate": (512, 2048)},
    ),
    "chosen_by_a_conditional": (
        """
int main(int argc, char** argv) {
    float *d, *s;
    launcher_t pick;
    pick = argc > 1 ? launch_twice : launch_negate;
    pick(d, s, 300, 128);
    return 0;
}
""",
        {"twice": (128, 300), "negate": (128, 300)},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_call_through_a_pointer_reaches_the_launcher(case: str) -> None:
    host, want = CASES[case]
    tu = parse_source(KERNELS + host, "t.cu")
    for kernel, (block, count) in want.items():
        bnd, diags = binding_from_inference(tu, kernel)
        assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
        assert list(bnd.block) == [block], kernel
        assert dict((s.name, s.value) for s in bnd.scalars)["count"] == count, kernel


def test_a_pointer_holding_another_launcher_passes_nothing() -> None:
    host = """
int main() {
    float *d, *s;
    launcher_t run = launch_negate;
    run(d, s, 777, 32);
    return 0;
}
"""
    tu = parse_source(KERNELS + host, "t.cu")
    bnd, _ = binding_from_inference(tu, "twice")
    assert bnd is None or dict((s.name, s.value) for s in bnd.scalars).get("count") != 777
