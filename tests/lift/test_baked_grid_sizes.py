"""A launch grid with a host size baked in as a number (``ceil_div(B * T * C, 256)`` where the host's
``C`` is ``NH * HS`` = 768 and the kernel takes ``NH`` and ``HS``) is rewritten over the bound
the kernel guards its threads with, so that at the sizes check chooses it launches every thread
the guard lets through (it used to cover 768 channels whatever NH and HS were)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

KERNEL = """
__global__ void heads_back(float* out, const float* in, int B, int T, int NH, int HS) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * NH * T * HS) {
        int e = i % HS, t = (i / HS) % T, h = (i / (HS * T)) % NH, b = i / (HS * T * NH);
        out[((b * T + t) * NH + h) * HS + e] = in[i];
    }
}
"""

#: the channel count a launcher is given, split into heads inside it
LAUNCHER = """
int ceil_div(int a, int b) { return (a + b - 1) / b; }
void launch(float* out, const float* in, int B, int T, int C, int NH) {
    int HS = C / NH;
    heads_back<<<ceil_div(B * T * C, 256), 256>>>(out, in, B, T, NH, HS);
}
int main() { launch(0, 0, 4, 64, 768, 12); return 0; }
"""

#: the same from constants of main, rounded up by hand
CONSTANTS = """
int main() {
    const int B = 2, T = 32, C = 384, NH = 6;
    int HS = C / NH;
    int bs = 128;
    heads_back<<<(B * T * C + bs - 1) / bs, bs>>>(0, 0, B, T, NH, HS);
    return 0;
}
"""

#: a define for the width
DEFINED = """
#define WIDTH 512
void go(float* out, const float* in, int B, int T, int NH) {
    heads_back<<<(B * T * WIDTH + 63) / 64, 64>>>(out, in, B, T, NH, WIDTH / NH);
}
int main() { go(0, 0, 2, 16, 4); return 0; }
"""

HOSTS = {"launcher": (LAUNCHER, 256), "constants": (CONSTANTS, 128), "define": (DEFINED, 64)}


@pytest.mark.parametrize("name", sorted(HOSTS))
def test_the_grid_follows_the_guarded_sizes(name: str) -> None:
    host, block = HOSTS[name]
    tu = parse_source(KERNEL + host, f"{name}.cu")
    partial, _ = infer_binding(tu, "heads_back")
    (grid,) = partial["launch"]["grid"]
    assert not any(n in str(grid) for n in ("768", "512")), grid
    b, _ = binding_from_inference(tu, "heads_back")
    assert b is not None
    sizes = {"B": 3, "T": 5, "NH": 16, "HS": 48}
    r = b.resolve({k: v for k, v in sizes.items() if k in {s.name for s in b.scalars}})
    threads = r.grid[0] * r.block[0]
    need = r.scalars["B"] * r.scalars["T"] * r.scalars["NH"] * r.scalars["HS"]
    assert r.block[0] == block and need <= threads < need + block
