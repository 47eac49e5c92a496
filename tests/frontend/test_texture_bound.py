"""A texture reference bound by ``cudaBindTexture(0, ref, p, n * sizeof(T))`` to ``n`` texels,
``n`` passed to the kernel: the texture's width is that kernel parameter (cuda2nki.frontend.
texbound), so ``check`` never makes the texture shorter than the launch the host pairs it with."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

KERNEL = """texture<{T}, 1, cudaReadModeElementType> {tex};
__global__ void scale(float* out, int {n}) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < {n}) out[i] = 2.0f * tex1Dfetch({tex}, i);
}}
void run(float* d, {T}* src, int {host}) {{
    cudaBindTexture(0, {tex}, src, {bytes});
    scale<<<({host} + 127) / 128, 128>>>(d, {host});
}}
"""

TIED = {
    "n_times_sizeof": dict(T="float", tex="tex", n="n", host="n", bytes="n * sizeof(float)"),
    "sizeof_times_count": dict(
        T="int", tex="lut", n="count", host="len", bytes="sizeof(int) * len"
    ),
    "bracketed": dict(T="float", tex="t_in", n="m", host="m", bytes="(m)*sizeof(float)"),
    "channel_descriptor": dict(
        T="float",
        tex="tx",
        n="n",
        host="n",
        bytes="cudaCreateChannelDesc<float>(), n*sizeof(float)",
    ),
}
FREE = {
    "byte_variable": dict(T="float", tex="tex", n="n", host="n", bytes="bytes"),
    "other_count": dict(T="float", tex="tex", n="n", host="n", bytes="k * sizeof(float)"),
    "other_texel_size": dict(T="float", tex="tex", n="n", host="n", bytes="n * sizeof(double)"),
}


def _port(tmp_path: Path, case: dict) -> tuple[Path, object]:
    cu = tmp_path / "k.cu"
    src = KERNEL.format(**case)
    if case["bytes"] == "bytes":
        src = src.replace("void run(float* d,", "void run(int bytes, float* d,")
    if case["bytes"].startswith("k "):
        src = src.replace("void run(float* d,", "void run(int k, float* d,")
    cu.write_text(src)
    return cu, port_file(cu)


@pytest.mark.parametrize("name", sorted(TIED))
def test_the_bound_count_is_the_texture_width(name: str, tmp_path: Path) -> None:
    case = TIED[name]
    cu, res = _port(tmp_path, case)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    header = res.source.splitlines()[1]
    assert f"{case['tex']}: " in header and f"[{case['n']}] in" in header, header
    assert f"{case['tex']}_width" not in res.source


@pytest.mark.parametrize("name", sorted(FREE))
def test_other_spellings_keep_the_texture_size_of_its_own(name: str, tmp_path: Path) -> None:
    _, res = _port(tmp_path, FREE[name])
    assert res.source is not None and "tex_width" in res.source.splitlines()[1]


@pytest.mark.slow
def test_a_tied_texture_port_passes_check(tmp_path: Path) -> None:
    cu, res = _port(tmp_path, TIED["sizeof_times_count"])
    port = tmp_path / "k.py"
    port.write_text(res.source)
    rep = check(cu, port, kernel=res.kernel, seeds=1)
    errors = [d.render() for d in rep.findings if d.severity == Severity.ERROR]
    assert rep.numerics_outcome == "pass" and not errors, errors
