"""Host constants declared in a branch of the launcher (``if (big) { const uint T = 128; dim3
b(T); k<T><<<g, b>>>(...); } else { const uint T = 64; ... }``): each launch instantiates the
kernel with the constants and ``dim3`` values visible where it is, not the last ones declared."""

from __future__ import annotations

import pytest

KERNEL = (
    "template <int TILE, int REP>\n"
    "__global__ void fill(float* p, int n) {\n"
    "  int i = blockIdx.x * TILE + threadIdx.x;\n"
    "  if (i < n) p[i] = TILE * REP;\n"
    "}\n"
)

IF_ELSE = """
void run(float* p, int n) {
  const int REP = 2;
  if (n >= 1024) {
    const int TILE = 256;
    dim3 blk(TILE);
    fill<TILE, REP><<<(n + TILE - 1) / TILE, blk>>>(p, n);
  } else {
    const int TILE = 64;
    dim3 blk(TILE);
    fill<TILE, REP><<<(n + TILE - 1) / TILE, blk>>>(p, n);
  }
}
"""

SWITCH = """
void run(float* p, int n, int mode) {
  constexpr unsigned REP = 2;
  switch (mode) {
  case 0: {
    constexpr unsigned TILE = 256;
    dim3 blk(TILE, 1);
    fill<TILE, REP><<<dim3((n + TILE - 1) / TILE), blk>>>(p, n);
    break;
  }
  default: {
    constexpr unsigned TILE = 64;
    dim3 blk(TILE, 1);
    fill<TILE, REP><<<dim3((n + TILE - 1) / TILE), blk>>>(p, n);
  }
  }
}
"""

SHADOWED = """
void run(float* p, int n) {
  const unsigned int TILE = 64;
  const unsigned int REP = 2;
  dim3 blk(TILE);
  {
    const unsigned int TILE = 256;
    dim3 blk(TILE);
    fill<TILE, REP><<<(n + TILE - 1) / TILE, blk>>>(p, n);
  }
  fill<TILE, REP><<<(n + TILE - 1) / TILE, blk>>>(p, n);
}
"""


@pytest.mark.parametrize("host", [IF_ELSE, SWITCH, SHADOWED], ids=["if-else", "switch", "shadow"])
def test_each_launch_instantiates_with_its_own_constants(parse, host):
    tu = parse(KERNEL + host)
    tiles = {k.name: dict(k.template_args) for k in tu.kernels}
    assert sorted(t["TILE"] for t in tiles.values()) == [64, 256]
    assert all(t["REP"] == 2 for t in tiles.values())
    sites = [s for s in tu.launch_sites if s.kernel == "fill"]
    # the first launch (in the branch or inner block) is the 256-wide one
    assert [tiles[s.instance]["TILE"] for s in sites] == [256, 64]
