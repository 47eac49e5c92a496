"""Sizes a struct's constructor stores: ``Params() : threads(16)``, or defaults set at the top
of a constructor that then parses the command line, inside the class or out of it."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

TILE = """
__global__ void blur(const unsigned char* src, unsigned char* dst, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) dst[y * w + x] = src[y * w + x] / 2;
}
"""

#: (host, the block edge it launches)
HOSTS = {
    "defaults-then-an-option-loop": (
        """
#include <getopt.h>
struct Params {
    int edge;
    int height;
    Params(int argc, char** argv) {
        edge = 16;
        height = 480;
        int opt;
        while ((opt = getopt(argc, argv, "e:h:")) >= 0) {
            switch (opt) {
            case 'e': edge = atoi(optarg); break;
            case 'h': height = atoi(optarg); break;
            }
        }
    }
};
int main(int argc, char** argv) {
    Params p(argc, argv);
    unsigned char *a, *b;
    int cols = 640;
    dim3 block(p.edge, p.edge);
    dim3 grid((cols + p.edge - 1) / p.edge, (p.height + p.edge - 1) / p.edge);
    blur<<<grid, block>>>(a, b, p.height, cols);
}""",
        16,
    ),
    "initializer-list": (
        """
class Settings {
  public:
    int tile;
    int rows;
    Settings() : tile(8), rows(256) {}
};
void run(const Settings& s, unsigned char* a, unsigned char* b) {
    dim3 threads(s.tile, s.tile);
    blur<<<dim3(64 / s.tile, s.rows / s.tile), threads>>>(a, b, s.rows, 64);
}
int main() { Settings s; unsigned char *a, *b; run(s, a, b); }""",
        8,
    ),
    "defined-out-of-the-class": (
        """
struct Opts {
    int side;
    Opts();
};
Opts::Opts() {
    side = 32;
}
int main() {
    Opts o;
    unsigned char *a, *b;
    blur<<<dim3(10, 10), dim3(o.side, o.side)>>>(a, b, 320, 320);
}""",
        32,
    ),
}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_constructors_first_value_of_a_member_is_its_value(host: str) -> None:
    src, edge = HOSTS[host]
    partial, diags = infer_binding(parse_source(TILE + src, "k.cu"), "blur")
    assert partial["launch"]["block"] == [edge, edge], partial["launch"]
    notes = " ".join(d.message for d in diags)
    assert "not set in the source" not in notes
