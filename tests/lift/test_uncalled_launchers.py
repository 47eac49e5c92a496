"""A launcher that nothing in the tree calls, whose grid is sized by a parameter the kernel is
not passed (``conv<<<(length + 255) / 256, 256>>>(out, in)`` in ``void conv(..., size_t
length)``): the size takes a default with a note, so the kernel is bound and checked at that
size instead of being left without a launch."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_file, parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: an unguarded element-wise conversion: the grid alone says how many elements there are
CONVERT = """
#define THREADS 512
__global__ void widen(float* out, const short* in) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    out[idx] = (float)in[idx];
}
"""

#: the note of a size no caller gives
_DEFAULTED = "no call in the tree gives"

#: (launcher, grid blocks at the default size of 1024, threads per block)
LAUNCHERS = {
    "size_t-rounded-up": (
        "void widen_all(float* out, const short* in, size_t length) {\n"
        "    widen<<<(length + THREADS - 1) / THREADS, THREADS>>>(out, in);\n}\n",
        2,
        512,
    ),
    "dim3-locals": (
        "static void run_widen(float* o, const short* i, int count, cudaStream_t st) {\n"
        "    dim3 threads(256);\n    dim3 blocks(count / threads.x);\n"
        "    widen<<<blocks, threads, 0, st>>>(o, i);\n}\n",
        4,
        256,
    ),
    "in-a-namespace-with-a-local": (
        "namespace conv {\nvoid to_float(float* out, const short* in, unsigned n) {\n"
        "    unsigned grid = (n + 127) / 128;\n    widen<<<grid, 128>>>(out, in);\n}\n}\n",
        8,
        128,
    ),
}


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_an_uncalled_launcher_sizes_its_grid_by_a_default(name: str) -> None:
    text, blocks, threads = LAUNCHERS[name]
    tu = parse_source(CONVERT + text, "c.cu")
    partial, diags = infer_binding(tu, "widen")
    launch = partial.get("launch", {})
    assert (launch.get("grid"), launch.get("block")) == ([blocks], [threads]), [
        d.message for d in diags
    ]
    assert partial["params"]["out"]["shape"] == [blocks * threads]
    assert any(_DEFAULTED in d.message for d in diags)
    assert binding_from_inference(tu, "widen")[0] is not None


def test_a_caller_elsewhere_in_the_tree_gives_the_size(tmp_path: Path) -> None:
    text = LAUNCHERS["size_t-rounded-up"][0]
    (tmp_path / "conv.cu").write_text(CONVERT + text)
    (tmp_path / "main.cpp").write_text(
        "void widen_all(float* out, const short* in, size_t length);\n"
        "int main() { float* o; short* i; widen_all(o, i, 4096); return 0; }\n"
    )
    partial, diags = infer_binding(parse_file(str(tmp_path / "conv.cu")), "widen")
    assert partial["launch"]["grid"] == [8], [d.message for d in diags]
    assert not any(_DEFAULTED in d.message for d in diags)


def test_a_caller_in_the_file_whose_size_is_unknown_takes_no_default() -> None:
    text = LAUNCHERS["size_t-rounded-up"][0] + (
        "size_t measured();\n"
        "int main() { float* o; short* i; widen_all(o, i, measured() * 0); return 0; }\n"
    )
    partial, diags = infer_binding(parse_source(CONVERT + text, "c.cu"), "widen")
    assert not any(_DEFAULTED in d.message for d in diags)
