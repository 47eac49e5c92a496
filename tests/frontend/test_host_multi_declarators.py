"""A declaration with several declarators (``int a = (n + 2) / 3, b = n / 3, c = a + b;``)
evaluates them in order, each seeing the earlier ones: a launch that passes the later ones takes
their real values, consistent with the earlier ones, rather than a default size.  The same holds
for ``const`` forms, file-scope constants and the declarations of a ``for`` header."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
__global__ void shift(int* out, const int* in, int count, int offset) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    out[t] = in[t] + offset;
}
"""

#: spelling -> (host code, count, offset, block)
CASES = {
    "later_uses_two_earlier": (
        """
void go(int* o, int* i, int n) {
    int head = (n + 2) / 3,
        tail = n / 3,
        both = head + tail;
    shift<<<(both + 255) / 256, 256>>>(o, i, both, head);
}
int main() { int *o, *i; go(o, i, 999); return 0; }
""",
        666,
        333,
        [256],
    ),
    "const_with_the_block_in_the_same_declaration": (
        """
int main() {
    int *o, *i;
    const int len = 4000, threads = 128, blocks = (len + threads - 1) / threads;
    shift<<<blocks, threads>>>(o, i, len - 7, threads / 2);
    return 0;
}
""",
        3993,
        64,
        [128],
    ),
    "file_scope_constants": (
        """
static const int kRows = 48, kCols = kRows * 3, kAll = kRows * kCols;
int main() {
    int *o, *i;
    shift<<<(kAll + 63) / 64, 64>>>(o, i, kAll, kCols);
    return 0;
}
""",
        48 * 144,
        144,
        [64],
    ),
    "for_header_declarations": (
        """
void sweep(int* o, int* i, int n) {
    for (int rep = 0, half = n / 2, span = half * 3; rep < 2; ++rep) {
        shift<<<(span + 31) / 32, 32>>>(o, i, span, half);
    }
}
int main() { int *o, *i; sweep(o, i, 500); return 0; }
""",
        750,
        250,
        [32],
    ),
    "pointer_and_size_declarators_mixed": (
        """
int main() {
    unsigned width = 64, height = width / 2, *unused = 0, pixels = width * height;
    int *o, *i;
    dim3 block(16 * 16);
    shift<<<(pixels + 255) / 256, block>>>(o, i, pixels, height - 1);
    return 0;
}
""",
        64 * 32,
        31,
        [256],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_declarator_sees_the_earlier_ones(case: str) -> None:
    host, count, offset, block = CASES[case]
    tu = parse_source(KERNEL + host, "t.cu")
    bnd, diags = binding_from_inference(tu, "shift")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    values = {s.name: s.value for s in bnd.scalars}
    assert values.get("count") == count, values
    assert values.get("offset") == offset, values
    assert list(bnd.block)[: len(block)] == block


def test_a_declarator_sees_the_outer_name_a_later_declarator_hides() -> None:
    """``int m = n, n = m * 3;`` in an inner block: ``m`` takes the outer ``n`` (the inner one
    is not yet declared), and the inner ``n`` then holds three times it."""
    host = """
void go(int* o, int* i, int base) {
    int n = base + 1;
    {
        int m = n, n = m * 3;
        shift<<<(n + 127) / 128, 128>>>(o, i, n, m);
    }
}
int main() { int *o, *i; go(o, i, 40); return 0; }
"""
    tu = parse_source(KERNEL + host, "t.cu")
    bnd, _ = binding_from_inference(tu, "shift")
    assert bnd is not None
    values = {s.name: s.value for s in bnd.scalars}
    assert (values.get("count"), values.get("offset")) == (123, 41)


def test_allocation_sizes_and_a_for_header_grid_follow_earlier_declarators() -> None:
    """``const size_t count = 1 << 12, bytes = count * sizeof(float);`` sizes the allocations,
    and ``for (int threads = 128, blocks = count / threads; ...)`` the launch."""
    src = """
__global__ void scale(float* y, const float* x, float f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i] * f;
}
int main() {
    const size_t count = 1 << 12, bytes = count * sizeof(float);
    float *x, *y;
    cudaMalloc(&x, bytes);
    cudaMalloc(&y, bytes);
    for (int threads = 128, blocks = count / threads; threads <= 128; threads *= 2)
        scale<<<blocks, threads>>>(y, x, 2.0f);
    return 0;
}
"""
    tu = parse_source(src, "t.cu")
    bnd, diags = binding_from_inference(tu, "scale")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert list(bnd.grid)[:1] == [32] and list(bnd.block)[:1] == [128]
    assert list(bnd.tensor("x").shape) == [4096] and list(bnd.tensor("y").shape) == [4096]
