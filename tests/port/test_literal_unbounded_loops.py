"""A loop whose trip count depends on data with no counter bounding it runs on the device; its port
says what the loop's condition reads, and the legacy API's refusal names the bound that would
make the loop a trace-time loop (:mod:`cuda2nki.lift.literal.unbounded`)."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import check_literal
from tests.port.test_literal import _kernel
from tests.port.test_literal_runtime_loops import runs_on_device

_PARAMS = (
    'x = { shape = ["n"], dtype = "float32", role = "in", range = [0.25, 40.0] }\n'
    'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 64'
)


@pytest.mark.parametrize(
    ("loop", "says"),
    [
        ("    while (v > 1.0f) v = v * 0.5f;\n", ("a loop whose", "per-thread 'v'")),
        ("    while (x[i] * 0.5f > w) w += 1.0f;\n", ("a loop whose", "'w' and memory")),
        ("    do { v += 1.0f; } while (v < x[i] * 2.0f);\n", ("a do-while loop", "memory")),
        ("    for (;;) { v *= 0.5f; if (v < 1.0f) break; }\n",
         ("a loop whose", "the flag of a break taken under a per-thread condition")),
    ],
)  # fmt: skip
def test_data_loops_say_what_they_read(tmp_path, loop, says):
    src = (
        "__global__ void r(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    float v = x[i], w = 0.0f;\n" + loop + "    if (i < n) y[i] = v + w;\n}\n"
    )
    cu = _kernel(tmp_path, src, "r", '"ceil_div(n, 32)"', "32", _PARAMS, ["n = 96", "n = 32"])
    port = runs_on_device(cu, tmp_path)
    comment = next(line for line in port.splitlines() if "trip count depends on data" in line)
    for text in says:
        assert text in comment, comment
    legacy = check_literal(cu, tmp_path, lowering="literal", target="legacy")
    assert "a conjunct 'k < K' in its condition" in legacy.detail, legacy.detail
