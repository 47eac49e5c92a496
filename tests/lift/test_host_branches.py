"""A block size chosen by a host branch (``if (n < 1024) threads = 128; else ...``): the arm
whose condition holds for the host's values is taken, else the first; a note says which."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
__global__ void axpy(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def _infer(host: str) -> tuple[dict, str]:
    partial, diags = infer_binding(parse_source(KERNEL + host, "b.cu"), "axpy")
    notes = " ".join(d.message for d in diags)
    return partial, notes


def _main(n: int, choose: str, launch: str = "axpy<<<(n + t - 1) / t, t>>>(y, x, 2.0f, n);") -> str:
    return (
        "int main() {\n"
        f"    int n = {n};\n"
        "    float *x, *y;\n"
        f"    {choose}\n"
        f"    {launch}\n"
        "    return 0;\n}\n"
    )


#: (spelling, n, expected block): the arm that holds for the host's n
HELD = [
    ("int t;\n    if (n < 1024) t = 128; else t = 256;", 5000, 256),
    ("int t;\n    if (n < 1024) t = 128; else t = 256;", 512, 128),
    ("int t;\n    if (n < 1024) { t = 64; }\n    else { t = 512; }", 100, 64),
    (
        "int t;\n    if (n > 4096) t = 512;\n    else if (n > 1024) t = 256;\n    else t = 32;",
        2000,
        256,
    ),
    (
        "int t;\n    if (n > 4096) t = 512;\n    else if (n > 1024) t = 256;\n    else t = 32;",
        10,
        32,
    ),
    ("int t = 256;\n    if (n <= 256) t = 64;", 100, 64),
    ("int t = 256;\n    if (n <= 256) t = 64;", 9000, 256),
]


@pytest.mark.parametrize(("choose", "n", "block"), HELD)
def test_the_arm_that_holds_for_the_host_values_is_taken(choose: str, n: int, block: int) -> None:
    partial, notes = _infer(_main(n, choose))
    assert partial["launch"]["block"] == [block], partial.get("launch")
    grid = str(partial["launch"]["grid"][0]).replace(" ", "")
    assert str(block) in grid, grid  # the grid divides by the same choice
    assert "chosen by a host branch" in notes


def test_an_unknown_condition_takes_the_first_arm_and_says_so() -> None:
    host = (
        "void run(float* y, float* x, int n, int big) {\n"
        "    int threads;\n"
        "    if (big) threads = 512; else threads = 128;\n"
        "    axpy<<<(n + threads - 1) / threads, threads>>>(y, x, 1.0f, n);\n}\n"
    )
    partial, notes = _infer(host)
    assert partial["launch"]["block"] == [512]
    assert "not known before run time: the first arm's 512 taken" in notes


def test_a_correction_of_the_same_variable_is_not_a_branch_choice() -> None:
    host = (
        "void run(float* y, float* x, int n) {\n"
        "    int blocks = n / 128;\n"
        "    if (n % 128) blocks = blocks + 1;\n"
        "    axpy<<<blocks, 128>>>(y, x, 1.0f, n);\n}\n"
    )
    partial, notes = _infer(host)
    assert str(partial["launch"]["grid"][0]).replace(" ", "") == "ceil_div(n,128)"
    assert "host branch" not in notes
