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


#: sizes from calls the file does not define, containers and template types
CALLS = {
    "method-of-a-library-object": (
        """
int main() {
    Tensor* t = make_tensor();
    float* v;
    int total = t->size();
    add_one<<<(total + 255) / 256, 256>>>(v, total);
}""",
        "computed at run time",
    ),
    "vector-size": (
        """
#include <vector>
int main() {
    const int n = 777;
    std::vector<float> h(n);
    float* v;
    add_one<<<(h.size() + 127) / 128, 128>>>(v, h.size());
}""",
        None,
    ),
    "thrust-vector-size": (
        """
int main() {
    thrust::device_vector<float> d(1500);
    add_one<<<(d.size() + 63) / 64, 64>>>(thrust::raw_pointer_cast(d.data()), (int)d.size());
}""",
        None,
    ),
    "sizeof-a-template-type": (
        """
template <typename T>
void bench(int megabytes) {
    int count = megabytes * 1024 / sizeof(T);
    float* v;
    add_one<<<count / 256, 256>>>(v, count);
}
int main() { bench<float>(4); }""",
        "a type not known here",
    ),
}


@pytest.mark.parametrize("host", sorted(CALLS))
def test_sizes_from_calls_containers_and_template_types(host: str) -> None:
    text, note = CALLS[host]
    tu = parse_source(ADD + text, "c.cu")
    partial, diags = infer_binding(tu, "add_one")
    assert "launch" in partial, [d.message for d in diags]
    count = partial["params"]["count"]
    assert isinstance(count, int) and count > 0
    if note is None:
        assert count in (777, 1500)
    else:
        assert any(note in d.message for d in diags)
    assert binding_from_inference(tu, "add_one")[0] is not None


HELPERS = {
    "computed-in-a-helper": ("int rows_of(int k) { int r = k * 8; return r * 2 + 4; }", 1604),
    "updated-in-a-helper": ("int rows_of(int k) { int r = k * 8; r += 4; return r * 2; }", None),
    "read-by-a-helper": (
        'int load(const char* f) { int c = 0; FILE* fp = fopen(f, "r"); '
        "while (fgetc(fp) != EOF) c++; return c; }",
        None,
    ),
}


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_a_size_returned_by_a_helper_of_the_file(helper: str) -> None:
    body, expected = HELPERS[helper]
    call = "rows_of(100)" if "rows_of" in body else "load(argv[1])"
    text = f"""
{body}
int main(int argc, char** argv) {{
    int total = {call};
    float* v;
    add_one<<<(total + 63) / 64, 64>>>(v, total);
}}"""
    tu = parse_source(ADD + text, "h.cu")
    partial, diags = infer_binding(tu, "add_one")
    count = partial["params"]["count"]
    if expected is None:
        assert count > 0 and any("computed at run time" in d.message for d in diags)
    else:
        assert count == expected, [d.message for d in diags]
    assert binding_from_inference(tu, "add_one")[0] is not None


@pytest.mark.parametrize(
    "decl,length",
    [
        ("int sizes[] = {300, 600, 900};", 3),
        ("float table[5];", 5),
        ("const unsigned widths[4] = {1, 2, 3, 4};", 4),
    ],
)
def test_the_item_count_idiom_of_an_array(decl: str, length: int) -> None:
    name = decl.split("[")[0].split()[-1]
    for denominator in (f"sizeof({name}[0])", f"sizeof(*{name})", "sizeof(int)"):
        text = f"""
int main() {{
    {decl}
    float* v;
    int n = sizeof({name}) / {denominator};
    add_one<<<1, 32>>>(v, n * 10);
}}"""
        partial, diags = infer_binding(parse_source(ADD + text, "a.cu"), "add_one")
        assert partial["params"]["count"] == length * 10, [d.message for d in diags]
