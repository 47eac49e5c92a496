"""Sizes kept in a struct (``cfg.width``, ``p->n``, ``args.block_size``): the value assigned to
the member, its default member initializer, else a default with a note."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.frontend.hostvals import DEFAULT_BLOCK
from cuda2nki.lift.infer import binding_from_inference, infer_binding

ADD = """
__global__ void add_one(float* v, int count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) v[i] += 1.0f;
}
"""

#: (host, the count it passes, the block it launches)
HOSTS = {
    "assigned-in-the-launching-function": (
        """
struct Config { int n; int threads; };
int main() {
    Config cfg;
    cfg.n = 3000;
    cfg.threads = 64;
    float* v;
    add_one<<<(cfg.n + cfg.threads - 1) / cfg.threads, cfg.threads>>>(v, cfg.n);
}""",
        3000,
        64,
    ),
    "filled-through-a-pointer-elsewhere": (
        """
typedef struct { int len; int block_size; } opts_t;
void parse(opts_t* o) { o->len = 5000; o->block_size = 256; }
void run(const opts_t* o, float* v) {
    add_one<<<o->len / o->block_size + 1, o->block_size>>>(v, o->len);
}
int main() { opts_t o; parse(&o); float* v; run(&o, v); }""",
        5000,
        256,
    ),
    "default-member-initialisers": (
        """
struct Args { int elements = 4096; int block = 128; };
int main() {
    Args args;
    float* v;
    add_one<<<args.elements / args.block, args.block>>>(v, args.elements);
}""",
        4096,
        128,
    ),
}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_struct_members_take_the_values_the_source_gives(host: str) -> None:
    text, count, block = HOSTS[host]
    tu = parse_source(ADD + text, "s.cu")
    partial, diags = infer_binding(tu, "add_one")
    assert partial["launch"]["block"] == [block], [d.message for d in diags]
    assert partial["params"]["count"] == count
    assert binding_from_inference(tu, "add_one")[0] is not None


def test_a_member_filled_at_run_time_takes_a_default_and_says_so() -> None:
    text = """
struct Image { int w, h; unsigned char* px; };
Image load(const char* path);
int main(int argc, char** argv) {
    Image img = load(argv[1]);
    float* v;
    add_one<<<(img.w * img.h + 255) / 256, 256>>>(v, img.w * img.h);
}"""
    tu = parse_source(ADD + text, "img.cu")
    partial, diags = infer_binding(tu, "add_one")
    assert partial["launch"]["block"] == [256]
    assert isinstance(partial["params"]["count"], int) and partial["params"]["count"] > 0
    assert any("is not set in the source" in d.message for d in diags)
    assert binding_from_inference(tu, "add_one")[0] is not None


def test_an_unknown_block_member_defaults_to_a_block_size() -> None:
    text = """
struct Run { int threads; };
void go(Run r, float* v) { add_one<<<16, r.threads>>>(v, 1000); }"""
    partial, _ = infer_binding(parse_source(ADD + text, "r.cu"), "add_one")
    assert partial["launch"]["block"] == [DEFAULT_BLOCK]


def test_an_unknown_dim3_member_is_not_a_struct_default() -> None:
    text = """
void go(float* v, int bs) {
    dim3 block(bs);
    add_one<<<1000 / block.x, block>>>(v, 1000);
}"""
    partial, diags = infer_binding(parse_source(ADD + text, "d.cu"), "add_one")
    assert not any("is not set in the source" in d.message for d in diags)
