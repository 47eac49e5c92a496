"""A loop known at trace time that walks a per-thread index one slot at a time reads the slots
in runs (:mod:`cuda2nki.lift.literal.proberun`): every few iterations the active threads' next
slots by one DMA, a thread whose index wrapped or jumped gathering its slot alone -- exact
against the interpreter (tolerance 0) for linear probes with breaks, wraps by ``&`` and ``%``,
scans without exits and neighbour reads; reads the module does not serve stay gathers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.literal_acceptance import check_literal

_BINDING = """\
kernel = "k"
[launch]
grid = [{grid}]
block = [{block}]
[params]
keys = {{ shape = ["n"], dtype = "int32", role = "in", range = [0, 40] }}
table = {{ shape = ["cap"], dtype = "int32", role = "in", range = [-3, 40] }}
w = {{ shape = ["cap"], dtype = "float32", role = "in" }}
out = {{ shape = ["n"], dtype = "float32", role = "out" }}
n = 300
cap = 64
[check]
rtol = 0
atol = 0
[[check.shapes]]
n = 130
cap = 32
[[check.shapes]]
n = 5
cap = 128
"""

_SIG = "__global__ void k(const int* keys, const int* table, const float* w, float* out, int n, int cap)"

#: name -> (body, threads per block, the buffers read in runs)
PROBES = {
    "linear_probe_masked_wrap_with_breaks": (
        """{
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n) return;
    int key = keys[q];
    int slot = (key * 7) & (cap - 1);
    float found = -1.0f;
    for (int p = 0; p < 16; ++p) {
        int held = table[slot];
        if (held == key) { found = w[slot]; break; }
        if (held < 0) break;
        slot = (slot + 1) & (cap - 1);
    }
    out[q] = found;
}""",
        128,
        ("table",),
    ),
    "counted_down_modulo_wrap_two_columns": (
        """{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) {
        int j = keys[i] % cap;
        float acc = 0.0f;
        for (int tries = 10; tries > 0; --tries) {
            int v = table[j];
            if (v < 0) break;
            acc += (float)v * w[j];
            j = (j + 1) % cap;
        }
        out[i] = acc;
    }
}""",
        256,
        ("table", "w"),
    ),
    "scan_without_exits_neighbour_reads": (
        """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int pos = keys[i] % (cap - 13);
        float best = -1.0e30f;
        for (int t = 0; t < 12; t++) {
            best = fmaxf(best, w[pos] + 0.5f * w[pos + 1]);
            pos += 1;
        }
        out[i] = best;
    }
}""",
        64,
        ("w",),
    ),
}

NO_PROBES = {
    "index_stepped_by_three": """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = keys[i] % cap;
        float acc = 0.0f;
        for (int t = 0; t < 6; t++) { acc += w[s]; s = (s + 3) % cap; }
        out[i] = acc;
    }
}""",
    "read_only_under_a_data_condition": """{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = keys[i] % cap;
        float acc = 0.0f;
        for (int t = 0; t < 6; t++) {
            if (acc < 1.0f) acc += w[s];
            s = (s + 1) % cap;
        }
        out[i] = acc;
    }
}""",
}


def _kernel(tmp: Path, body: str, block: int) -> Path:
    cu = tmp / "k.cu"
    cu.write_text(f"{_SIG}\n{body}\n")
    grid = f'"ceil_div(n, {block})"'
    cu.with_suffix(".toml").write_text(_BINDING.format(grid=grid, block=block))
    return cu


def _exact(cu: Path, tmp: Path, target: str = "nki") -> str:
    out = check_literal(cu, tmp, lowering="literal", target=target)
    assert out.status == "match", (target, out.status, out.detail)
    assert len(out.points) >= 2
    port = (tmp / f"{cu.stem}_literal_{target}.py").read_text()
    return port[port.index("@nki.jit") :]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_walked_indices_read_their_slots_in_runs_exactly(tmp_path, name):
    body, block, buffers = PROBES[name]
    cu = _kernel(tmp_path, body, block)
    kernel = _exact(cu, tmp_path)
    for t in buffers:
        assert f"_c2n_probe_run({t}, 8, " in kernel, kernel
        assert f"_c2n_gather({t}, " not in kernel
    assert ".at(" in kernel
    _exact(cu, tmp_path, "legacy")  # the legacy API gathers each slot alone


def test_a_probe_run_carries_its_reason(tmp_path):
    body, block, _ = PROBES["linear_probe_masked_wrap_with_breaks"]
    kernel = _exact(_kernel(tmp_path, body, block), tmp_path)
    assert "_c2n_gather(w, " in kernel  # read on a hit only: gathered alone
    port = (tmp_path / "k_literal_nki.py").read_text()
    helper = port[port.index("def _c2n_gather_run") :]
    helper = helper[: helper.index("\n\n\n")]
    assert "        if probe:\n            # cuda2nki: ignore[C2N5014] each thread reads" in helper


@pytest.mark.parametrize("name", sorted(NO_PROBES))
def test_reads_the_module_does_not_serve_stay_gathers(tmp_path, name):
    kernel = _exact(_kernel(tmp_path, NO_PROBES[name], 128), tmp_path)
    assert "_c2n_probe_run(" not in kernel
    assert "_c2n_gather(w, " in kernel
