"""Add-only shared-memory networks (cuda2nki.lift.network): the corpus Blelloch scan's reads are
prefix folds and its root read the chunk total; a network that is not a correct scan (a barrier
missing, a wrong offset, the root not cleared) is not recognised as one -- its reads are not
claimed by the network analysis, and the kernel is refused or ported literally, never ported as
a scan."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift import affine as af
from cuda2nki.lift import network
from cuda2nki.lift import values as V
from cuda2nki.lift.api import find_kernel
from cuda2nki.lift.symexec import execute

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "scan"
BLELLOCH = (CORPUS / "scan_blelloch.cu").read_text()
TOML = (CORPUS / "scan_blelloch.toml").read_text()

#: the corpus kernel with one defect each
BROKEN = {
    "no_barrier_down_sweep": (
        "        offset >>= 1;\n        __syncthreads();\n",
        "        offset >>= 1;\n",
    ),
    "no_barrier_up_sweep": (
        "    for (int d = m >> 1; d > 0; d >>= 1) {\n        __syncthreads();\n",
        "    for (int d = m >> 1; d > 0; d >>= 1) {\n",
    ),
    "wrong_offset": (
        "int b = offset * (2 * thid + 2) - 1;\n            temp[b] += temp[a];",
        "int b = offset * (2 * thid + 2) - 2;\n            temp[b] += temp[a];",
    ),
    "root_not_cleared": ("        temp[m - 1] = 0.0f;\n", ""),
}
RACY = {"no_barrier_down_sweep", "no_barrier_up_sweep"}


def _broken(name: str) -> str:
    old, new = BROKEN[name]
    assert old in BLELLOCH
    return BLELLOCH.replace(old, new, 1)


def _program(src: str, threads: int):
    tu = parse_source(src, "k.cu")
    return execute(tu, find_kernel(tu, "scan_blelloch"), (threads, 1, 1))


@pytest.mark.parametrize("threads", [8, 32, 1024])
def test_blelloch_reads_are_exclusive_prefixes_and_the_total(threads) -> None:
    prog = _program(BLELLOCH, threads)
    net = network.analyse(prog.shared["temp"], prog.block, "j")
    assert net is not None
    t = af.sym("threadIdx.x")
    stops = {}
    for st in prog.stores:
        got = network.read(net, st.value, prog.block)
        assert isinstance(got, V.Fold) and got.op == "add" and got.start == af.ZERO, st
        stops.setdefault(st.tensor, []).append(got.stop)
    assert stops["g_odata"] == [2 * t, 2 * t + 1]  # exclusive: the elements before
    assert stops["block_totals"] == [af.Poly.const(2 * threads)]  # the whole chunk


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_network_that_is_not_a_scan_is_not_recognised(name) -> None:
    prog = _program(_broken(name), 8)
    net = network.analyse(prog.shared["temp"], prog.block, "j")
    if name in RACY:
        assert net is None  # a read racing another thread's write between the same barriers
        return
    assert net is not None
    reads = [network.read(net, st.value, prog.block) for st in prog.stores]
    assert all(r is None for r in reads[1:]), reads  # the scan results: not prefix folds


@pytest.mark.parametrize(("threads", "ordered"), [(32, True), (64, False)])
def test_syncwarp_orders_the_threads_of_one_warp_only(threads, ordered) -> None:
    """``__syncwarp`` in place of ``__syncthreads``: a scan when the block is one warp, racy (not
    recognised) when the network crosses warps."""
    src = BLELLOCH.replace("__syncthreads();", "__syncwarp();")
    prog = _program(src, threads)
    net = network.analyse(prog.shared["temp"], prog.block, "j", prog.warp_epochs)
    if not ordered:
        assert net is None
        return
    got = network.read(net, prog.stores[-1].value, prog.block)
    assert isinstance(got, V.Fold) and got.stop == 2 * af.sym("threadIdx.x") + 1


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_scan_is_never_ported_as_a_scan(name, target, tmp_path) -> None:
    from cuda2nki.binding import load_binding
    from tests.port.acceptance import port_source, run_against_simt

    src = _broken(name).replace("const int threads = 128;", "const int threads = 8;")
    binding = (TOML.replace("256", "16").replace("block = [128]", "block = [8]")).replace(
        "2 * 128 * 4", "2 * 8 * 4"
    )
    got = port_source(tmp_path, name, src, binding, target=target)
    if name in RACY:
        assert got.res.literal  # what a race leaves depends on the schedule
        return
    # refused by the recognisers (ported literally), or lifted as what it is -- never a scan
    assert got.res.literal or "scan" not in (got.res.idiom or "").split(",")
    run = run_against_simt(got.res, load_binding(got.binding), got.port, points=[{"n": 40}])
    assert not run.mismatches, run.mismatches


SKIP_HEAD = """
__global__ void k(const float* in, float* out, int n) {
    __shared__ float buf[2][64];
    int tid = threadIdx.x, gid = blockIdx.x * 64 + tid;
    int pout = 0, pin = 1;
    buf[pout][tid] = (tid >= 5 && gid < n) ? in[gid] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < 64; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset) buf[pout][tid] = buf[pin][tid] + buf[pin][tid - offset];
        else buf[pout][tid] = buf[pin][tid];
        __syncthreads();
    }
    if (tid >= 5 && gid < n) out[gid] = buf[pout][tid];
}"""


@pytest.mark.parametrize("n", [300, 65, 7])
def test_a_scan_body_assumes_only_the_guard_that_holds_below_the_position(n) -> None:
    """The store's guard ``tid >= 5`` holds at the position, not at the earlier positions the
    scan sums: the staged select on it stays in the scanned body."""
    import numpy as np

    from cuda2nki.binding import binding_from_dict, generate_inputs
    from cuda2nki.ir.evaluate import evaluate
    from cuda2nki.lift import lift_kernel

    binding = binding_from_dict(
        {
            "kernel": "k",
            "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
            "params": {
                "in": {"shape": ["n"], "dtype": "float32", "role": "in"},
                "out": {"shape": ["n"], "dtype": "float32", "role": "out"},
                "n": n,
            },
        },
        path="<skip_head>",
    )
    res = lift_kernel(parse_source(SKIP_HEAD, "skip_head.cu"), "k", binding)
    assert res.claimed and res.idiom == "scan", res.diagnostics
    resolved = binding.resolve({"n": n})
    inputs = generate_inputs(resolved, seed=5)
    got = evaluate(res.kernel_ir, {k: v.copy() for k, v in inputs.items()}, dict(resolved.scalars))
    x = inputs["in"].astype(np.float64)
    for g in range(n):
        tid = g % 64
        if tid >= 5:
            want = x[g - tid + 5 : g + 1].sum()
            assert abs(float(got["out"][g]) - want) <= 1e-4 * (1 + abs(want)), (g, want)
