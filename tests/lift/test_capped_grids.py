"""Reductions launched on a capped grid, ``min(cap, ceil_div(n, b))`` blocks, with a grid-stride
loop inside and one partial result per block in ``out[blockIdx.x]``: the capped count is a size
of its own (:mod:`cuda2nki.lift.capped`), the partial results' extent is that count, and the
lifter reasons about it instead of refusing the grid."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: block partial sums through shared memory; `{acc}`/`{step}` vary the spelling
KERNEL = """
#define CAP_BLOCKS 24
static inline int div_up(int a, int b) {{ return (a + b - 1) / b; }}
__global__ void block_sums(float *partial, const float *src, int {n})
{{
    extern __shared__ float buf[];
    int {tid} = blockIdx.x * blockDim.x + threadIdx.x;
    float {acc} = 0.0f;
    for (int k = {tid}; k < {n}; k += {step})
        {acc} += src[k];
    buf[threadIdx.x] = {acc};
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }}
    if (threadIdx.x == 0) partial[blockIdx.x] = buf[0];
}}
"""

#: host spellings of the capped grid: (launcher, grid count as a function of n, block)
HOSTS = {
    "cap-first-literal": (
        """
void run(float *out, const float *in, int n, int threads) {{
    int blocks = min(64, (n + threads - 1) / threads);
    block_sums<<<blocks, threads, threads * sizeof(float)>>>(out, in, n);
}}
int main() {{ float *o, *i; run(o, i, 1 << 14, 256); }}""",
        lambda n: min(64, (n + 255) // 256),
        256,
    ),
    "count-first-macro-cap": (
        """
void run(float *out, const float *in, int n) {{
    const int threads = 128;
    const int blocks = std::min(div_up(n, threads), CAP_BLOCKS);
    block_sums<<<blocks, threads, threads * sizeof(float)>>>(out, in, n);
}}
int main() {{ float *o, *i; run(o, i, 10000, 0); }}""",
        lambda n: min(24, (n + 127) // 128),
        128,
    ),
    "dim3-product-cap": (
        """
void run(float *out, const float *in, int n) {{
    dim3 block(64);
    dim3 grid(min((n + block.x - 1) / block.x, 4 * 8));
    block_sums<<<grid, block, 64 * sizeof(float)>>>(out, in, n);
}}
int main() {{ float *o, *i; run(o, i, 5000); }}""",
        lambda n: min(32, (n + 63) // 64),
        64,
    ),
}

SPELLINGS = {
    "gid-grid-stride": dict(n="n", tid="gid", acc="sum", step="blockDim.x * gridDim.x"),
    "renamed-stride-order": dict(n="count", tid="i0", acc="v", step="gridDim.x * blockDim.x"),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("host", sorted(HOSTS))
def test_partial_results_have_one_element_per_block_of_the_capped_grid(
    host: str, spelling: str
) -> None:
    _, count, block = HOSTS[host]
    n = SPELLINGS[spelling]["n"]
    tu = parse_source(KERNEL.format(**SPELLINGS[spelling]) + HOSTS[host][0].format(), "r.cu")
    partial, diags = infer_binding(tu, "block_sums")
    assert not [d for d in diags if d.code == "C2N2101"], diags
    launch = partial["launch"]
    assert launch["block"][0] == block
    (dim,) = partial["params"]["partial"]["shape"]
    for size in (1, 100, block * 3 + 1, 1 << 14, 1 << 20):
        env = {n: size}
        assert eval_c_expr(dim, env) == eval_c_expr(launch["grid"][0], env) == count(size)
    assert partial["params"]["src"]["shape"] == [n]
    assert binding_from_inference(tu, "block_sums")[0] is not None


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_the_lifter_reasons_about_a_capped_grid(tmp_path: Path, host: str) -> None:
    src = tmp_path / "r.cu"
    src.write_text(KERNEL.format(**SPELLINGS["gid-grid-stride"]) + HOSTS[host][0].format())
    try:
        res = api.port(str(src), kernel="block_sums")
        diags = list(res.diagnostics)
    except Exception as exc:  # noqa: BLE001 - a refusal carries its diagnostics
        diags = list(getattr(exc, "diagnostics", ()))
    text = " ".join(f"{d.code} {d.message}" for d in diags)
    assert "unsupported size expression" not in text, text
    assert any(d.code == "C2N2001" and "lifted as reduce" in d.message for d in diags), text


def test_migrate_checks_a_reduction_on_a_capped_grid(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "r.cu").write_text(
        KERNEL.format(**SPELLINGS["gid-grid-stride"]) + HOSTS["cap-first-literal"][0].format()
    )
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True, timeout=600))
    (rec,) = [r for r in res.records if r["kernel"] == "block_sums"]
    assert rec["port"] and rec["numerics"] == "pass", rec
