"""The host's common ways of zeroing a slot counter right before a launch -- a fill in the
launcher's caller, an asynchronous fill, a copy of a host zero (a zero scalar, ``*h = 0``,
``h[0] = 0``, a zeroed host buffer) -- start the counter at zero in the inferred binding and
in ``check``; a non-zero value, a store after the zeroing or a launch in between do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding
from cuda2nki.pipeline import port_file

KERNEL = """
__global__ void touch(int* c) { c[0] += 3; }
__global__ void keep(float* dst, int* slots, const float* src, int count) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < count) { int at = atomicAdd(&slots[0], 1); dst[at] = src[t] + 1.0f; }
}
"""

# the launcher the callers below call; LAUNCHER_PRE runs in it before the launch
LAUNCHER = """
void run_keep(float* o, int* counter, const float* in, int count) {
    LAUNCHER_PRE
    keep<<<(count + 255) / 256, 256>>>(o, counter, in, count);
}
"""

MAIN = """
int main() {
    int count = 2000; float *d_o, *d_in; int* d_slots;
    cudaMalloc(&d_o, count * sizeof(float)); cudaMalloc(&d_in, count * sizeof(float));
    cudaMalloc((void**)&d_slots, sizeof(int));
    HOST
    return 0;
}
"""

_RUN = "run_keep(d_o, d_slots, d_in, count);"
_LAUNCH = "keep<<<(count + 255) / 256, 256>>>(d_o, d_slots, d_in, count);"

ZEROED = {
    "memset_in_the_caller_of_the_launcher": ("", f"cudaMemset(d_slots, 0, sizeof(int)); {_RUN}"),
    "async_memset_in_the_launcher": ("cudaMemsetAsync(counter, 0, sizeof(int), 0);", _RUN),
    "copy_of_a_zero_scalar": (
        "",
        "int zero = 0;\n    cudaMemcpy(d_slots, &zero, sizeof(int), cudaMemcpyHostToDevice);\n"
        f"    {_LAUNCH}",
    ),
    "copy_of_a_pointer_set_to_zero_in_the_launcher": (
        "int* h = (int*)malloc(sizeof(int)); *h = 0;\n"
        "    cudaMemcpyAsync(counter, h, sizeof(int), cudaMemcpyHostToDevice, 0);",
        _RUN,
    ),
    "copy_of_first_element_two_callers_deep": (
        "",
        "unsigned h_n[1]; h_n[0] = 0u;\n"
        "    cudaMemcpy(d_slots, h_n, sizeof(unsigned), cudaMemcpyHostToDevice);\n"
        "    wrap(d_slots, d_o, d_in, count);",
    ),
    "copy_of_a_zero_initialised_array": (
        "",
        "int init[1] = {0};\n"
        f"    cudaMemcpy(d_slots, init, sizeof(init), cudaMemcpyHostToDevice); {_RUN}",
    ),
}

NOT_ZEROED = {
    "non_zero_fill_in_the_caller": ("", f"cudaMemset(d_slots, 0xff, sizeof(int)); {_RUN}"),
    "copy_of_a_non_zero_scalar": (
        "",
        "int start = 7;\n    cudaMemcpy(d_slots, &start, sizeof(int), cudaMemcpyHostToDevice);\n"
        f"    {_LAUNCH}",
    ),
    "scalar_changed_after_zeroing": (
        "",
        "int zero = 0; zero++;\n"
        f"    cudaMemcpy(d_slots, &zero, sizeof(int), cudaMemcpyHostToDevice); {_LAUNCH}",
    ),
    "pointer_zeroed_then_set": (
        "int* h = (int*)malloc(sizeof(int)); *h = 0; h[0] = 5;\n"
        "    cudaMemcpy(counter, h, sizeof(int), cudaMemcpyHostToDevice);",
        _RUN,
    ),
    "launch_between_in_the_caller": (
        "",
        f"cudaMemset(d_slots, 0, sizeof(int)); touch<<<1, 1>>>(d_slots); {_RUN}",
    ),
    "launch_between_in_the_launcher": (
        "touch<<<1, 1>>>(counter);",
        f"cudaMemset(d_slots, 0, 4); {_RUN}",
    ),
    "one_caller_does_not_zero": (
        "",
        f"cudaMemset(d_slots, 0, sizeof(int)); {_RUN}\n    {_RUN}",
    ),
    "zeroed_through_another_function_of_the_file": (
        "",
        f"cudaMemset(d_slots, 0, sizeof(int)); bump_host(d_slots); {_RUN}",
    ),
}

_EXTRA = (
    "void wrap(int* s, float* o, const float* in, int count) { run_keep(o, s, in, count); }\n",
    "void bump_host(int* s) { touch<<<1, 1>>>(s); }\n",
)


def _src(pre: str, host: str) -> str:
    """The kernel, the launcher and helpers where the host calls them, and ``main``."""
    src = KERNEL
    if "run_keep" in host or "wrap" in host:
        src += LAUNCHER.replace("LAUNCHER_PRE", pre)
    for helper in _EXTRA:
        if helper.split("(")[0].split()[-1] in host:
            src += helper
    return src + MAIN.replace("HOST", host)


def _slots(pre: str, host: str) -> dict:
    partial, diags = infer_binding(parse_source(_src(pre, host), "z.cu"), "keep")
    spec = partial["params"]["slots"]
    assert spec["role"] == "inout", diags
    return spec


@pytest.mark.parametrize("case", sorted(ZEROED))
def test_a_counter_the_host_zeroes_starts_at_zero(case: str) -> None:
    assert _slots(*ZEROED[case]).get("range") == [0, 1]


@pytest.mark.parametrize("case", sorted(NOT_ZEROED))
def test_a_counter_not_zeroed_right_before_keeps_random_values(case: str) -> None:
    assert "range" not in _slots(*NOT_ZEROED[case])


@pytest.mark.parametrize(
    "case", ["memset_in_the_caller_of_the_launcher", "copy_of_first_element_two_callers_deep"]
)
def test_check_of_a_host_zeroed_counter_port_passes(tmp_path: Path, case: str) -> None:
    cu = tmp_path / "z.cu"
    cu.write_text(_src(*ZEROED[case]))
    res = port_file(cu, kernel="keep")
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / "z_port.py"
    port.write_text(res.source)
    rep = check(cu, port, kernel="keep", seeds=1, extra_points=False, timeout=300)
    assert rep.numerics_outcome == "pass", (rep.numerics, [d.message for d in rep.findings])
