"""Pointer locals chosen by a condition (``T* p = c ? a : b;``) in literal ports
(:mod:`cuda2nki.lift.literal.ptrselect`): each access through ``p`` makes the choice itself.
The interpreter holds one buffer per pointer variable, so each port is compared, bit for bit
and at every test point of its binding, with the interpreter's run of the same kernel written
with the choice made explicitly at each access (by hand, not by the rewrite under test)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.port.acceptance import run_against_simt, tensor_param

_PARAMS = "const float* x, const float* z, float* y, float* w, int n, int stride"

KERNELS = [
    # lanes of a warp copy into one of two caches (half the warp each), derived pointer
    # locals with row offsets, `auto`
    ("lane_chosen_caches", """
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = idx / 32, lane = idx % 32;
    if (row >= n) return;
    const bool first = lane < 16;
    const auto in = first ? x : z;
    const auto out = first ? y : w;
    const auto src = in + row * stride;
    float* dst = out + row * stride;
    dst[lane % 16] = src[lane % 16] * (first ? 2.0f : 3.0f) + 1.0f;
}""", """
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = idx / 32, lane = idx % 32;
    if (row >= n) return;
    float v = lane < 16 ? x[row * stride + lane % 16] : z[row * stride + lane % 16];
    if (lane < 16) y[row * stride + lane % 16] = v * 2.0f + 1.0f;
    else w[row * stride + lane % 16] = v * 3.0f + 1.0f;
}"""),
    # one buffer or the other by block, read only, in a loop over the row, offset first
    ("block_chosen_rows", """
    const float* rows = blockIdx.x % 2 == 0 ? x + 0 : z;
    int r = blockIdx.x * blockDim.x / 32 + threadIdx.x / 32;
    int c = threadIdx.x % 32;
    if (r >= n || c >= stride) return;
    float s = 0.0f;
    for (int j = 0; j <= c; ++j) s += rows[r * stride + j];
    y[r * stride + c] = s;
}""", """
    int r = blockIdx.x * blockDim.x / 32 + threadIdx.x / 32;
    int c = threadIdx.x % 32;
    if (r >= n || c >= stride) return;
    float s = 0.0f;
    for (int j = 0; j <= c; ++j) s += blockIdx.x % 2 == 0 ? x[r * stride + j] : z[r * stride + j];
    y[r * stride + c] = s;
}"""),
    # chosen by data, written through `*p` and a compound assignment, the flag an int
    ("data_chosen_accumulate", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n * stride) return;
    int neg = x[t] < 0.0f;
    float* p = neg ? w + t : y + t;
    *p = z[t];
    p[0] += x[t] * 0.5f;
}""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n * stride) return;
    if (x[t] < 0.0f) { w[t] = z[t]; w[t] += x[t] * 0.5f; }
    else { y[t] = z[t]; y[t] += x[t] * 0.5f; }
}"""),
]  # fmt: skip


def _bdict() -> dict:
    return {
        "kernel": "k",
        "launch": {"grid": ["ceil_div(n * 32, 128)"], "block": [128]},
        "params": {
            "x": tensor_param(["n", "stride"], "in", "float32", [-2.0, 2.0]),
            "z": tensor_param(["n", "stride"], "in"),
            "y": tensor_param(["n", "stride"], "inout"),
            "w": tensor_param(["n", "stride"], "inout"),
            "n": 12,
            "stride": 16,
        },
        "check": {"shapes": [{"n": 5, "stride": 16}]},
    }


@pytest.mark.parametrize(("name", "chosen", "explicit"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_chosen_pointers_port_exactly(name, chosen, explicit, target, tmp_path) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.frontend import parse_file
    from cuda2nki.pipeline import port_file

    head = f"__global__ void k({_PARAMS}) {{\n"
    cu = tmp_path / f"{name}.cu"
    cu.write_text(head + chosen)
    ref = tmp_path / f"{name}_explicit.cu"
    ref.write_text(head + explicit)
    binding = binding_from_dict(_bdict(), path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    against = dataclasses.replace(res, tu=parse_file(ref))
    points = binding.test_points()
    run = run_against_simt(against, binding, port, points=points, rtol=0.0, atol=0.0)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
