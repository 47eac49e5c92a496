"""Kernels written with C++ constructs -- device functions as template arguments, template
parameters deduced from the launch, namespace-qualified calls, enums as constants -- port
through a recogniser on both targets with the numbers of the CUDA kernel."""

from __future__ import annotations

import pytest

from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

#: corpus kernel -> the idiom that claims it
FORMS = {
    "cxx/act_kernel_fnarg": "map",  # apply_act<act::silu><<<...>>>, enum class
    "cxx/block_sum_fnarg": "reduce",  # blockReduce<warpReduceSum>, function-pointer typedef
    "cxx/convert_deduced": "map",  # Tin, Tout deduced; using namespace nn::fn
    "cxx/row_max_fnptr": "reduce",  # warp_all<&red::ops::max2>, nested namespaces
    "cxx/rowsum_deduced_ns": "reduce",  # row_total<128> with T deduced; fwd::weight, bwd::weight
    "cxx/scale_deduced": "map",  # T deduced from a cast; cfg::Tile::COLS, cfg::ROWS
    "cxx/scale_tag_dispatch": "map",  # block size from a std::integral_constant tag
}


def test_every_cxx_corpus_kernel_is_listed() -> None:
    assert sorted(f"cxx/{p.stem}" for p in (CORPUS / "cxx").glob("*.cu")) == sorted(FORMS)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_cxx_corpus_kernels_port_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == FORMS[rel], out
    assert len(out.shapes) >= 3


_UNLAUNCHED = """
#include <cuda_runtime.h>
__device__ float halve(float v) { return 0.5f * v; }
namespace ops { __device__ float neg(float v) { return -v; } }
template <int S, typename T, float (*op)(float)>
__global__ void scale_t(T* y, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (T)(op((float)x[i]) * S);
}
"""

_UNLAUNCHED_BINDING = """
kernel = "scale_t"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
y = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
n = 1000
[check]
rtol = 1e-5
atol = 1e-5
[[check.shapes]]
n = 300
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["halve", "ops::neg"])
def test_port_and_check_take_template_arguments(target, op, tmp_path, capsys) -> None:
    from cuda2nki.cli.main import main

    cu = tmp_path / "tpl.cu"
    cu.write_text(_UNLAUNCHED)
    cu.with_suffix(".toml").write_text(_UNLAUNCHED_BINDING)
    port = tmp_path / "tpl_port.py"
    targs = ["--template", "S=3", "--template", "T=float", "--template", f"op={op}"]
    assert main(["port", str(cu), "--api", target, "-o", str(port), *targs]) == 0
    assert main(["check", str(cu), str(port), "--seeds", "1", *targs]) == 0
    capsys.readouterr()
    # without them the kernel is not instantiated: port and check say so, by id
    assert main(["port", str(cu), "--api", target, "-o", str(tmp_path / "none.py")]) != 0
    assert "C2N1023" in capsys.readouterr().err


def test_template_values_that_do_not_fit_are_input_errors(tmp_path, capsys) -> None:
    from cuda2nki.cli.main import main

    cu = tmp_path / "tpl.cu"
    cu.write_text(_UNLAUNCHED)
    cu.with_suffix(".toml").write_text(_UNLAUNCHED_BINDING)
    out = str(tmp_path / "p.py")
    assert main(["port", str(cu), "-o", out, "--template", "S"]) == 2
    assert "C2N0002" in capsys.readouterr().err
    bad = ["--template", "S=3", "--template", "T=float", "--template", "op=missing"]
    assert main(["port", str(cu), "-o", out, *bad]) != 0
    err = capsys.readouterr().err
    assert "C2N1024" in err and "tpl.cu:5:" in err


_ASSERTS = """
#include <assert.h>
__global__ void k(float* y, const float* x, int n) {
    assert(blockDim.x % 32 == 0);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(n > 0 && i >= 0);
        y[i] = x[i] * 2.0f;
    }
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_device_asserts_are_checks_not_values(target, tmp_path) -> None:
    from cuda2nki.pipeline import port_file

    cu = tmp_path / "asserts.cu"
    cu.write_text(_ASSERTS)
    cu.with_suffix(".toml").write_text(
        _UNLAUNCHED_BINDING.replace('kernel = "scale_t"', 'kernel = "k"')
    )
    out = check_kernel(cu, target, tmp_path, max_points=2)
    assert out.status == "match" and out.idiom == "map", out
    literal = port_file(cu, target=target, lowering="literal")
    assert literal.source is not None and literal.literal, literal.diagnostics
