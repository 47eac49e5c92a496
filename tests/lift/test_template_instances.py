"""Several instantiations of one template kernel in a file: binding inference finds each one's own
launch site, and each ports under a valid Python name that the simulator runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki import api
from cuda2nki.codegen.spell import py_name
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference
from cuda2nki.nkisim import load_kernel, simulate_kernel

SOURCE = """
template <int BS, typename T>
__global__ void scale_by_block(const T* src, T* dst, int count) {
    int i = blockIdx.x * BS + threadIdx.x;
    if (i < count) dst[i] = src[i] * (T)BS;
}
void host(const float* a, float* b, int n) {
    scale_by_block<128, float><<<(n + 127) / 128, 128>>>(a, b, n);
    scale_by_block<64, float><<<dim3((n + 63) / 64), dim3(64)>>>(a, b, n);
}
"""

BINDING = """
[params]
src = {{ shape = ["count"], dtype = "float32", role = "in" }}
dst = {{ shape = ["count"], dtype = "float32", role = "out" }}
count = 300

[launch]
grid = ["ceil_div(count, {bs})"]
block = [{bs}]
"""


@pytest.mark.parametrize("bs", [128, 64])
def test_inference_uses_the_instance_launch_site(bs: int) -> None:
    tu = parse_source(SOURCE, "two.cu")
    name = f"scale_by_block<{bs}, float32>"
    assert name in {f.name for f in tu.functions}
    _binding, notes = binding_from_inference(tu, name)
    launch = [d.message for d in notes if "inferred launch" in d.message]
    assert launch and f"block [{bs}]" in launch[0]
    assert not any(d.code == "C2N2101" and "launch" in d.message for d in notes)


@pytest.mark.parametrize("bs", [128, 64])
def test_each_instance_ports_and_runs(tmp_path: Path, bs: int) -> None:
    cu = tmp_path / "two.cu"
    cu.write_text(SOURCE)
    toml = tmp_path / "b.toml"
    toml.write_text(BINDING.format(bs=bs))
    res = api.port(cu, binding=toml, kernel=f"scale_by_block<{bs}, float>")
    assert res.source is not None, [d.message for d in res.diagnostics]
    assert f"def scale_by_block_{bs}_float32(" in res.source
    port = tmp_path / "port.py"
    port.write_text(res.source)
    fn = load_kernel(str(port), f"scale_by_block_{bs}_float32")
    src = np.linspace(-1, 1, 300, dtype=np.float32)
    got = simulate_kernel(fn, {"src": src}).outputs  # the port returns its one output
    np.testing.assert_array_equal(np.asarray(got, np.float32), src * np.float32(bs))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("block_sum<256, float32>", "block_sum_256_float32"),
        ("k<-1>", "k_1"),
        ("lambda", "lambda_"),
        ("plain_name", "plain_name"),
    ],
)
def test_python_names_of_kernels(name: str, expected: str) -> None:
    assert py_name(name) == expected
    assert expected.isidentifier()
