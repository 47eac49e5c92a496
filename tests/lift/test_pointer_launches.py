"""Kernels launched through a function pointer (a harness that picks the kernel to run): each
kernel assigned to the pointer takes the launch's geometry and arguments."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

KERNELS = """
#define TILE 16
__global__ void copy_k(float *o, const float *i, int w, int h) {
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    o[y * w + x] = i[y * w + x];
}
__global__ void flip_k(float *o, const float *i, int w, int h) {
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    o[x * h + y] = i[y * w + x];
}
"""

HOSTS = {
    "switch-with-address-of": """
int main() {
    const int w = 64, h = 32;
    float *a, *b;
    void (*kernel)(float *, const float *, int, int);
    dim3 grid(w / TILE, h / TILE), threads(TILE, TILE);
    for (int k = 0; k < 2; k++) {
        switch (k) {
            case 0: kernel = &copy_k; break;
            case 1: kernel = flip_k; break;
        }
        kernel<<<grid, threads>>>(b, a, w, h);
    }
}""",
    "typedef-and-if-else-deref": """
typedef void (*tile_fn)(float *, const float *, int, int);
void run(bool flip, float *b, float *a) {
    tile_fn fn;
    if (flip) fn = (tile_fn)flip_k; else fn = copy_k;
    (*fn)<<<dim3(4, 2), dim3(TILE, TILE)>>>(b, a, 64, 32);
}""",
    "array-initialiser-indexed": """
void (*const table[2])(float *, const float *, int, int) = {copy_k, &flip_k};
int main() {
    float *a, *b;
    for (int t = 0; t < 2; ++t) table[t]<<<dim3(4, 2), dim3(TILE, TILE)>>>(b, a, 64, 32);
}""",
    "array-items-assigned": """
int main() {
    float *a, *b;
    void (*fp[2])(float *, const float *, int, int);
    fp[0] = copy_k;
    fp[1] = flip_k;
    dim3 g(64 / TILE, 32 / TILE);
    dim3 t(TILE, TILE);
    for (int i = 0; i < 2; i++) fp[i]<<<g, t>>>(b, a, 64, 32);
}""",
}


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("kernel", ["copy_k", "flip_k"])
def test_every_kernel_assigned_to_the_pointer_gets_the_launch(host: str, kernel: str) -> None:
    tu = parse_source(KERNELS + HOSTS[host], "p.cu")
    assert {s.kernel for s in tu.launch_sites} == {"copy_k", "flip_k"}
    assert not [d for d in tu.diagnostics if d.code == "C2N1027"]
    partial, diags = infer_binding(tu, kernel)
    assert partial["launch"]["block"] == [16, 16], [d.message for d in diags]
    assert partial["params"]["w"] == 64 and partial["params"]["h"] == 32
    assert binding_from_inference(tu, kernel)[0] is not None


TIMER = """
void time_it(void (*k)(float *, const float *, int, int), float *b, float *a, int n) {
    k<<<dim3(n / 16, 2), dim3(TILE, TILE)>>>(b, a, n, 32);
}
"""


def test_a_kernel_passed_to_a_launcher_parameter_gets_its_launch() -> None:
    text = (
        TIMER
        + "int main() { float *a, *b; time_it(flip_k, b, a, 64); time_it(&copy_k, b, a, 64); }"
    )
    tu = parse_source(KERNELS + text, "t.cu")
    assert [s.kernel for s in tu.launch_sites] == ["flip_k", "copy_k"]
    partial, diags = infer_binding(tu, "copy_k")
    assert partial["params"]["w"] == 64 and partial["launch"]["grid"][0] in (4, "(w / 16)")


def test_a_pointer_never_set_to_a_kernel_gives_no_launch_site() -> None:
    tu = parse_source(KERNELS + TIMER, "q.cu")
    assert not tu.launch_sites or all(s.kernel == "k" for s in tu.launch_sites)
