"""A pointer launched into a buffer (``stencil<<<g, b>>>(d_in + RADIUS, d_out)``): the inferred
binding names the buffer (its shape, ``offset``), the kernel is rebased on it, and check and the
port are both bound to the buffer, so reads below the pointer (``in[-RADIUS]``) are in bounds."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.offsets import rebased
from cuda2nki.lift.infer import infer_binding
from cuda2nki.simt import run_kernel

STENCIL = """
#define N 1024
#define R 2
#define BS 32
__global__ void smooth(const float* src, float* dst) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int o = -R; o <= R; o++) s += src[g + o];
    dst[g] = s;
}
int main() {
    float *d_in, *d_out;
    cudaMalloc(&d_in, (N + 2 * R) * sizeof(float));
    cudaMalloc(&d_out, N * sizeof(float));
    smooth<<<N / BS, BS>>>(ARG, d_out);
    return 0;
}
"""

ROWS = """
#define W 64
#define H 16
#define R 1
__global__ void below(const int* img, int* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    out[y * W + x] = img[(y - R) * W + x] + img[y * W + x];
}
int main() {
    int *d_img, *d_out;
    below<<<dim3(W / 32, H), 32>>>(d_img + 2 * R * W / 2, d_out);
    return 0;
}
"""

SPELLINGS = {
    "plus": ("d_in + R", 2),
    "address-of-element": ("&d_in[R]", 2),
    "constant-times": ("d_in + 2 * R", 4),
    "reversed-cast": ("(const float*)(R + d_in)", 2),
}


def _binding(src: str, kernel: str):
    tu = parse_source(src, "o.cu")
    partial, diags = infer_binding(tu, kernel)
    return tu, partial, diags


@pytest.mark.parametrize("case", sorted(SPELLINGS))
def test_an_offset_argument_binds_the_buffer(case: str) -> None:
    arg, off = SPELLINGS[case]
    _, partial, diags = _binding(STENCIL.replace("ARG", arg), "smooth")
    src = partial["params"]["src"]
    assert src["offset"] == off
    # the view's accesses reach 1023 + 2; the buffer holds the offset more
    assert src["shape"][0] >= 1024 + 2 + off
    assert "offset" not in partial["params"]["dst"]
    assert any("a view" in d.message and "'src'" in d.message for d in diags)


def test_a_row_offset_in_two_dimensions() -> None:
    _, partial, _ = _binding(ROWS, "below")
    img = partial["params"]["img"]
    assert img["offset"] == 64
    assert img["shape"] == [16 * 64 + 64]


def test_the_rebased_kernel_runs_on_the_buffer_in_bounds() -> None:
    tu, partial, _ = _binding(STENCIL.replace("ARG", "d_in + R"), "smooth")
    b = binding_from_dict(partial)
    tu2 = rebased(tu, "smooth", b)
    res = b.resolve()
    buf = np.arange(res.shapes["src"][0], dtype=np.float32)
    out = run_kernel(
        tu2,
        "smooth",
        grid=res.grid,
        block=res.block,
        args={"src": buf, "dst": np.zeros(res.shapes["dst"], np.float32)},
    )["dst"]
    want = [sum(buf[2 + g + o] for o in range(-2, 3)) for g in range(1024)]  # src[-2] = buf[0]
    np.testing.assert_allclose(out[:1024], want)


def test_an_output_view_keeps_the_buffer_before_it() -> None:
    src = STENCIL.replace("ARG", "d_in + R").replace(
        "d_out);\n    return", "d_out + 3);\n    return"
    )
    _, partial, _ = _binding(src, "smooth")
    dst = partial["params"]["dst"]
    assert dst["offset"] == 3 and dst["role"] == "inout"


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_a_bad_offset_in_a_binding_is_refused(bad: object) -> None:
    data = {
        "kernel": "k",
        "launch": {"grid": [1], "block": [32]},
        "params": {"x": {"shape": [40], "dtype": "float32", "role": "in", "offset": bad}},
    }
    with pytest.raises(DiagnosticError, match="offset"):
        binding_from_dict(data)


def test_port_and_check_of_an_offset_launch_agree(tmp_path) -> None:
    from cuda2nki import api

    cu = tmp_path / "smooth.cu"
    cu.write_text(STENCIL.replace("ARG", "&d_in[R]").replace("d_out);", "d_out + 1);"))
    res = api.port(cu)
    assert res.source is not None
    port = tmp_path / "smooth_port.py"
    port.write_text(res.source)
    report = api.check(cu, port, seeds=2)
    assert report.numerics_outcome == "pass", [d.message for d in report.findings]


def test_the_port_keeps_the_unit_as_written_for_a_second_inference(tmp_path) -> None:
    """migrate infers the binding again from the port's unit: the offset counts once."""
    from cuda2nki import api

    cu = tmp_path / "smooth.cu"
    cu.write_text(STENCIL.replace("ARG", "d_in + R"))
    res = api.port(cu)
    again, _ = infer_binding(res.tu, "smooth")
    first, _ = infer_binding(parse_source(cu.read_text(), str(cu)), "smooth")
    assert again["params"]["src"] == first["params"]["src"]
