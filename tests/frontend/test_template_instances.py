"""Several instantiations of one template kernel in a file: each is a kernel of its own, named
``k<args>``, selectable by that name (``--kernel``) and runnable in SIMT."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cuda2nki import api
from cuda2nki.binding import load_binding
from cuda2nki.cli.main import main
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend.select import select_kernel

REDUCE = """\
template <unsigned int BLOCK, typename T = float>
__global__ void block_sum(const T* in, T* out, unsigned int n) {
    __shared__ T s[BLOCK];
    unsigned int i = blockIdx.x * BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned int st = BLOCK / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
void run(const float* in, float* out, unsigned int n) {
    block_sum<128><<<(n + 127) / 128, 128>>>(in, out, n);
    block_sum<256u, float><<<(n + 255) / 256, 256>>>(in, out, n);
    block_sum<32, double><<<(n + 31) / 32, 32>>>((const double*)in, (double*)out, n);
}
"""

BINDING = """\
kernel = "{kernel}"
[launch]
grid = ["ceil_div(n, {block})"]
block = [{block}]
[params]
in = {{ shape = ["n"], dtype = "{dtype}", role = "in" }}
out = {{ shape = ["ceil_div(n, {block})"], dtype = "{dtype}", role = "out" }}
n = 1000
"""


def test_each_instantiation_is_a_kernel_named_by_its_arguments(parse):
    tu = parse(REDUCE)
    assert tu.rejected == {}
    assert [k.name for k in tu.kernels] == [
        "block_sum<128, float32>",
        "block_sum<256, float32>",
        "block_sum<32, float64>",
    ]
    assert [k.template_args[0] for k in tu.kernels] == [
        ("BLOCK", 128),
        ("BLOCK", 256),
        ("BLOCK", 32),
    ]
    assert [s.kernel for s in tu.launch_sites] == ["block_sum"] * 3


def test_a_single_instantiation_keeps_the_plain_name(parse):
    one = REDUCE.split("    block_sum<256u")[0] + "}\n"
    tu = parse(one)
    assert [k.name for k in tu.kernels] == ["block_sum"]
    assert select_kernel(tu, "block_sum") == "block_sum"
    assert select_kernel(tu, "block_sum<128>") == "block_sum"  # its instantiation name works too


@pytest.mark.parametrize(
    ("spelled", "name"),
    [
        ("block_sum<256, float32>", "block_sum<256, float32>"),
        ("block_sum<256,float>", "block_sum<256, float32>"),
        ("block_sum< 256u >", "block_sum<256, float32>"),  # the default for T fills in
        ("block_sum<0x80>", "block_sum<128, float32>"),
        ("block_sum<32, double>", "block_sum<32, float64>"),
        (" block_sum<32> ", "block_sum<32, float64>"),
    ],
)
def test_selection_accepts_cxx_spellings(parse, spelled, name):
    assert select_kernel(parse(REDUCE), spelled) == name


@pytest.mark.parametrize("spelled", ["block_sum", "block_sum<64>", "block_sum<128, int>", "other"])
def test_ambiguous_or_unknown_selection_is_a_usage_error(parse, spelled):
    tu = parse(REDUCE)
    with pytest.raises(DiagnosticError) as exc:
        select_kernel(tu, spelled)
    (d,) = exc.value.diagnostics
    assert d.code == "C2N0002"
    if spelled.startswith("block_sum"):
        assert "block_sum<128, float32>, block_sum<256, float32>, block_sum<32, float64>" in (
            d.message
        )


def test_one_rejected_instantiation_does_not_reject_the_others(parse):
    src = (
        "template <int N> __global__ void k(float* p) {\n"
        "    if constexpr (N > 2) { p[0] = undefined_name; } else { p[0] = N; }\n"
        "}\n"
        "void h(float* p) { k<1><<<1, 1>>>(p); k<4><<<1, 1>>>(p); }\n"
    )
    tu = parse(src)
    assert [k.name for k in tu.kernels] == ["k<1>"]
    assert list(tu.rejected) == ["k<4>"] and tu.rejected["k<4>"][0].code == "C2N1020"
    with pytest.raises(DiagnosticError) as exc:
        select_kernel(tu, "k<4>")
    assert exc.value.diagnostics[0].code == "C2N1020"
    assert select_kernel(tu, "k<1>") == "k<1>"
    for spelled in ("k", "k<2>"):  # 'k' names two instantiations, one of them refused
        with pytest.raises(DiagnosticError) as exc:
            select_kernel(tu, spelled)
        (d,) = exc.value.diagnostics
        assert d.code == "C2N0002" and "(k<1>, k<4>)" in d.message


@pytest.mark.parametrize(
    ("kernel", "block", "dtype"), [("128", 128, "float32"), ("32", 32, "float64")]
)
def test_every_instantiation_runs(tmp_path, kernel, block, dtype):
    cu = tmp_path / "red.cu"
    cu.write_text(REDUCE)
    toml = tmp_path / "red.toml"
    toml.write_text(BINDING.format(kernel=f"block_sum<{kernel}>", block=block, dtype=dtype))
    x = np.random.default_rng(1).standard_normal(1000).astype(dtype)
    res = api.run_full(cu, load_binding(toml), inputs={"in": x})
    assert res.kernel.startswith(f"block_sum<{block}, ")
    want = np.add.reduceat(x.astype(np.float64), np.arange(0, 1000, block))
    np.testing.assert_allclose(res.outputs["out"], want, rtol=1e-5, atol=1e-5)


def test_cli_run_and_parse_select_instantiations(tmp_path, capsys):
    cu = tmp_path / "red.cu"
    cu.write_text(REDUCE)
    toml = tmp_path / "red.toml"
    toml.write_text(BINDING.format(kernel="block_sum", block=256, dtype="float32"))
    out = tmp_path / "o.npz"
    assert main(["run", str(cu), "--binding", str(toml), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "[C2N0002]" in err and "--kernel 'block_sum<32, float64>'" in err
    args = ["run", str(cu), "--binding", str(toml), "--out", str(out)]
    assert main([*args, "--kernel", "block_sum<256>"]) == 0
    assert capsys.readouterr().out.startswith("block_sum<256, float32>: grid (4, 1, 1)")
    assert np.load(out)["out"].shape == (4,)
    assert main(["parse", str(cu), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [k["name"] for k in doc["kernels"]][:2] == [
        "block_sum<128, float32>",
        "block_sum<256, float32>",
    ]
    assert main(["run", "--help"]) == 0
    assert "--kernel 'reduce<256>'" in " ".join(capsys.readouterr().out.split())
