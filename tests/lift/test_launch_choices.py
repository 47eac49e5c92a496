"""Launch sizes chosen by a host condition: ``(blocks > 1 || found > LIMIT) ? LIMIT : found``.
A ``||`` whose left side already holds (or a ``&&`` whose left side fails) decides without its
right side, which may be a count known only at run time; a condition that stays unknown takes
the first arm whose value is known, with a note."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
#define LIMIT 256
const int rows = 4096;
const int groups = rows / 1024;
int found;
__global__ void mark(int* flags) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    flags[i] = i;
}
"""

HOSTS = {
    "or-decided-by-left": (
        "void go(int* f) { mark<<<groups, (groups > 1 || found > LIMIT) ? LIMIT : found>>>(f); }",
        [256],
    ),
    "and-decided-by-left": (
        "void go(int* f) { mark<<<groups, (groups < 1 && found > 0) ? found : 128>>>(f); }",
        [128],
    ),
    "macro-launch-or": (
        """#define RUN(k, nb, nt) k<<<nb, nt>>>(f)
void go(int* f) { RUN(mark, groups, (groups >= 2 || found >= 1024) ? 512 : found); }""",
        [512],
    ),
    "unknown-condition-first-known-arm": (
        "void go(int* f) { mark<<<groups, found < LIMIT ? found : LIMIT>>>(f); }",
        [256],
    ),
}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_block_chosen_by_a_host_condition_is_inferred(host: str) -> None:
    src, block = HOSTS[host]
    tu = parse_source(KERNEL + src, "choice.cu")
    partial, diags = infer_binding(tu, "mark")
    launch = partial.get("launch")
    assert launch is not None, [str(d) for d in diags]
    assert [b for b in launch["block"] if b != 1] == block
    assert [int(eval_c_expr(str(g), {})) for g in launch["grid"]][0] == 4
