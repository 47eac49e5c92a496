"""One test per hardware/API check: the diagnostic id and the port's own line (marked ``# <-``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, simulate_kernel

CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n"
LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n\n"


def port(tmp_path, header: str, body: str, name: str = "port.py"):
    text = header + textwrap.dedent(body)
    path = tmp_path / name
    path.write_text(text)
    marked = [i + 1 for i, ln in enumerate(text.splitlines()) if ln.rstrip().endswith("# <-")]
    return path, (marked[0] if marked else None)


def expect(tmp_path, header, body, code, inputs=None, **kw):
    path, line = port(tmp_path, header, body)
    k = load_kernel(path)
    if inputs is None:
        inputs = [np.ones((128, 512), np.float32)]
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, inputs, **kw)
    d = ei.value.diagnostic
    assert d.code == code, d
    assert d.loc.file == str(path) and d.loc.line == line, d
    return d


def test_partition_dim_over_128(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((256, 4), nl.float32, buffer=nl.sbuf)  # <-
            return a
    """,
        "C2N3002",
    )


def test_on_chip_below_2d(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((128,), nl.float32, buffer=nl.sbuf)  # <-
            return a
    """,
        "C2N3003",
    )


def test_matmul_contraction_mismatch(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 64), nl.bfloat16, buffer=nl.sbuf)
            m = nl.ndarray((64, 512), nl.bfloat16, buffer=nl.sbuf)
            d = nl.ndarray((64, 512), nl.float32, buffer=nl.psum)
            nisa.nc_matmul(d, s, m)  # <-
            return a
    """,
        "C2N3004",
    )


def test_matmul_stationary_free_limit(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 256), nl.bfloat16, buffer=nl.sbuf)
            m = nl.ndarray((128, 512), nl.bfloat16, buffer=nl.sbuf)
            d = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            nisa.nc_matmul(d, s, m)  # <-
            return a
    """,
        "C2N3005",
    )


def test_matmul_moving_free_limit_trn2(tmp_path):
    d = expect(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            s = nl.zeros((128, 128), nl.bfloat16)
            m = nl.zeros((128, 1024), nl.bfloat16)
            r = nl.matmul(s, m, transpose_x=True)  # <-
            return a
    """,
        "C2N3006",
    )
    assert "512" in d.message and "trn2" in d.message


def test_matmul_mixed_fp32_and_bf16(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
            m = nl.ndarray((128, 512), nl.bfloat16, buffer=nl.sbuf)
            d = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            nisa.nc_matmul(d, s, m)  # <-
            return a
    """,
        "C2N3007",
    )


def test_psum_tile_larger_than_bank(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            acc = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)  # <-
            return a
    """,
        "C2N3008",
    )


def test_psum_tile_two_banks_allowed_on_trn3(tmp_path):
    path, _ = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            acc = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=a)
            return out
    """,
    )
    simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], target="trn3")


def test_dma_reads_psum_current_api(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
            acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            nisa.memset(acc, 0.0)
            nisa.dma_copy(dst=out, src=acc)  # <-
            return out
    """,
        "C2N3009",
    )


def test_gpsimd_touches_psum(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            nisa.memset(acc, 0.0)
            nisa.tensor_copy(dst=t, src=acc, engine=nisa.engine.gpsimd)  # <-
            return a
    """,
        "C2N3010",
    )


@pytest.mark.parametrize(
    ("header", "buffer", "launch"),
    [
        (CUR, "nl.hbm", 2),  # LNC 2: one private HBM per core
        (CUR, "nl.private_hbm", 2),
        (LEG, "nl.hbm", 2),  # an SPMD grid of two instances
        (LEG, "nl.private_hbm", (2, 1)),
        (CUR, "nl.sbuf", None),  # on-chip: never an output
        (LEG, "nl.sbuf", None),
    ],
)
def test_output_not_in_shared_hbm(tmp_path, header, buffer, launch):
    copy = "nisa.dma_copy(dst=out, src=a)" if header is CUR else "nl.store(out, value=nl.load(a))"
    if buffer == "nl.sbuf":
        copy = "nisa.dma_copy(dst=out, src=a)" if header is CUR else "out[...] = nl.load(a)"
    path, line = port(
        tmp_path,
        header,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer={buffer})  # <-
            {copy}
            return out
    """,
    )
    k = load_kernel(path)
    if launch is not None:
        k = k[launch]
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.ones((128, 64), np.float32)])
    d = ei.value.diagnostic
    assert d.code == "C2N3011" and (d.loc.file, d.loc.line) == (str(path), line), d


@pytest.mark.parametrize("header", [CUR, LEG])
@pytest.mark.parametrize("buffer", ["nl.hbm", "nl.private_hbm"])
def test_single_instance_may_return_private_hbm(tmp_path, header, buffer):
    """With one instance, private HBM is the only HBM: the public kernels return ``nl.hbm``."""
    copy = "nisa.dma_copy(dst=out, src=a)" if header is CUR else "nl.store(out, value=nl.load(a))"
    path, _ = port(
        tmp_path,
        header,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer={buffer})
            {copy}
            return out
    """,
    )
    a = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    np.testing.assert_array_equal(simulate_kernel(load_kernel(path), [a]).outputs, a)


def test_legacy_write_to_input(tmp_path):
    expect(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            t = nl.load(a)
            nl.store(a, value=t)  # <-
            return a
    """,
        "C2N3012",
    )


def test_partition_start_constraint(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
            u = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
            nisa.memset(u, 1.0)
            nisa.tensor_copy(dst=t[16:80, :], src=u[0:64, :])  # <-
            return a
    """,
        "C2N3013",
    )


def test_tensor_tensor_element_count_mismatch(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            x = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            y = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
            z = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)  # <-
            return a
    """,
        "C2N3014",
    )


def test_reduction_over_partition_axis(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            x = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            nisa.memset(x, 1.0)
            s = nl.sum(x, axis=0)  # <-
            return a
    """,
        "C2N3015",
    )


def test_dtype_not_allowed_memset_value(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            x = nl.ndarray((128, 4), nl.int32, buffer=nl.sbuf)
            nisa.memset(x, 1.5)  # <-
            return a
    """,
        "C2N3016",
    )


def test_dtype_not_allowed_matmul_int(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 128), nl.int8, buffer=nl.sbuf)
            m = nl.ndarray((128, 512), nl.int8, buffer=nl.sbuf)
            d = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
            nisa.nc_matmul(d, s, m)  # <-
            return a
    """,
        "C2N3016",
    )


def test_sbuf_capacity_points_at_allocation(tmp_path):
    # one instruction reads one tile and writes another: both must be on chip at once
    d = expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            big = nl.ndarray((128, 40000), nl.float32, buffer=nl.sbuf)
            more = nl.ndarray((128, 20000), nl.float32, buffer=nl.sbuf)  # <-
            nisa.memset(more, 0.0)
            nisa.tensor_copy(dst=big[0:128, 0:20000], src=more)
            return a
    """,
        "C2N3017",
    )
    assert "240000" in d.message and "212984" in d.message


def test_sbuf_capacity_operands_of_one_instruction_legacy(tmp_path):
    expect(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            x = nl.zeros((128, 20000), nl.float32)
            y = nl.exp(x)
            z = nl.add(x, y)  # <-
            return a
    """,
        "C2N3017",
    )


def test_unused_tile_occupies_nothing(tmp_path):
    # a tile no instruction touches is dead from the start: it does not count
    path, _ = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            big = nl.ndarray((128, 40000), nl.float32, buffer=nl.sbuf)
            more = nl.ndarray((128, 20000), nl.float32, buffer=nl.sbuf)
            nisa.memset(more, 0.0)
            return a
    """,
    )
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    assert res.profile.peak_sbuf_bytes_per_partition == 80000
    assert not [w for w in res.warnings if w.code == "C2N3031"]


def test_sbuf_capacity_frees_loop_tiles(tmp_path):
    # 10 iterations of a 160 KB/partition tile: fine, each iteration's tile dies with the next
    path, _ = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            for i in range(10):
                t = nl.ndarray((128, 40000), nl.float32, buffer=nl.sbuf)
                nisa.memset(t, 0.0)
            return a
    """,
    )
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    assert res.profile.peak_sbuf_bytes_per_partition == 160000


def test_sbuf_capacity_counts_to_the_last_use_not_the_object(tmp_path):
    # the tiles stay referenced by the list, but each is dead after its memset
    path, _ = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            keep = []
            for i in range(3):
                t = nl.ndarray((128, 20000), nl.float32, buffer=nl.sbuf)
                nisa.memset(t, 0.0)
                keep.append(t)
            return a
    """,
    )
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    assert res.profile.peak_sbuf_bytes_per_partition == 80000
    assert not [w for w in res.warnings if w.code == "C2N3031"]


SPILL = """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
            keep = []
            for i in range(N):
                t = nl.ndarray((128, 20000), nl.float32, buffer=nl.sbuf)
                nisa.memset(t, float(i))  # <-
                keep.append(t)
            acc = nl.ndarray((128, 4), nl.float32, buffer=nl.sbuf)
            nisa.memset(acc, 0.0)
            for t in keep:
                nisa.tensor_tensor(dst=acc, data1=acc, data2=t[0:128, 0:4], op=nl.add)
            nisa.dma_copy(dst=out, src=acc)
            return out
    """


@pytest.mark.parametrize("n", [3, 5])
def test_sbuf_over_capacity_that_spilling_meets_is_a_note(tmp_path, n):
    # n tiles written in a loop and all read again after it: live at once, but each instruction
    # needs one of them: the compiler spills the rest (a note with the cost), and the values hold
    path, line = port(tmp_path, CUR, SPILL.replace("range(N)", f"range({n})"))
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    assert np.array_equal(res.outputs, np.full((128, 4), sum(range(n)), np.float32))
    notes = [w for w in res.warnings if w.code == "C2N3031"]
    assert len(notes) == 1 and notes[0].loc.line == line, res.warnings
    # over capacity from the third tile's memset on; the peak adds the accumulator
    live = n * 80000 + 16
    assert res.profile.peak_sbuf_bytes_per_partition == live
    spilled = live - 212984
    assert "need 240000 bytes per partition here" in notes[0].message
    assert f"(at the peak {live})" in notes[0].message
    assert f"spill {spilled} bytes per partition" in notes[0].message
    assert f"{2 * spilled * 128 / (16 * 23) / 1000:.2f} us" in notes[0].message


def test_sbuf_capacity_per_target(tmp_path):
    path, _ = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 50000), nl.float32, buffer=nl.sbuf)
            nisa.memset(t, 0.0)
            return a
    """,
    )
    k = load_kernel(path)
    simulate_kernel(k, [np.ones((4, 4), np.float32)], target="trn3")  # 200000 <= 245752
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.ones((4, 4), np.float32)], target="trn1")  # > 180224
    assert ei.value.diagnostic.code == "C2N3017"


def test_psum_over_eight_banks(tmp_path):
    expect(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            acc = nl.zeros((9, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)  # <-
            return a
    """,
        "C2N3018",
    )


def test_psum_tiles_live_together_over_eight_banks_spill(tmp_path):
    path, line = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
            tiles = [nl.ndarray((128, 512), nl.float32, buffer=nl.psum) for i in range(9)]
            for t in tiles:
                nisa.memset(t, 1.0)  # <-
            acc = nl.ndarray((128, 4), nl.float32, buffer=nl.sbuf)
            nisa.memset(acc, 0.0)
            for t in tiles:
                nisa.tensor_tensor(dst=acc, data1=acc, data2=t[0:128, 0:4], op=nl.add)
            nisa.dma_copy(dst=out, src=acc)
            return out
    """,
    )
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    assert np.array_equal(res.outputs, np.full((128, 4), 9.0, np.float32))
    notes = [w for w in res.warnings if w.code == "C2N3031"]
    assert len(notes) == 1 and notes[0].loc.line == line and "PSUM" in notes[0].message
    assert res.profile.peak_psum_banks == 9


def test_index_out_of_bounds(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            v = t[0:128, 0:600]  # <-
            return a
    """,
        "C2N3019",
    )


def test_uninitialised_read_when_strict(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            u = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
            nisa.memset(t[:, 0:256], 0.0)
            nisa.activation(dst=u, op=nl.exp, data=t)  # <-
            return a
    """,
        "C2N3020",
        strict_uninit=True,
    )


def test_unknown_api_is_not_supported(tmp_path):
    d = expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            nisa.nc_matmul_mx(None, None, None, None, None)  # <-
            return a
    """,
        "C2N3001",
    )
    assert "nki.isa.nc_matmul_mx" in d.message


def test_mask_is_legacy_only(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.load(a, mask=None)
            u = nl.exp(t, mask=True)  # <-
            return a
    """,
        "C2N3001",
    )


def test_current_nl_ops_do_not_broadcast(tmp_path):
    expect(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.load(a)
            col = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
            nisa.memset(col, 1.0)
            u = nl.add(t, col)  # <-
            return a
    """,
        "C2N3026",
    )


def test_legacy_nl_ops_broadcast(tmp_path):
    path, _ = port(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            t = nl.load(a)
            col = nl.full((128, 1), 2.0, nl.float32)
            nl.store(out, value=nl.multiply(t, col))
            return out
    """,
    )
    a = np.arange(128 * 4, dtype=np.float32).reshape(128, 4)
    np.testing.assert_array_equal(simulate_kernel(load_kernel(path), [a]).outputs, 2 * a)


def test_env_target_override(tmp_path, monkeypatch):
    path, _ = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 50000), nl.float32, buffer=nl.sbuf)
            nisa.memset(t, 0.0)
            return a
    """,
    )
    k = load_kernel(path)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    with pytest.raises(DiagnosticError):
        simulate_kernel(k, [np.ones((4, 4), np.float32)])
    # the CLI/API target wins over the environment
    simulate_kernel(k, [np.ones((4, 4), np.float32)], target="trn3")


def test_legacy_platform_target(tmp_path):
    path, _ = port(
        tmp_path,
        LEG,
        """
        @nki.jit(platform_target="trn3")
        def k(a):
            t = nl.ndarray((128, 50000), nl.float32, buffer=nl.sbuf)
            u = nl.exp(t[:, 0:4])
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(a))
            return out
    """,
    )
    simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)])


def test_legacy_returning_an_input_points_at_the_kernel(tmp_path):
    path, _ = port(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            return a
    """,
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)])
    d = ei.value.diagnostic
    assert (
        d.code == "C2N3011" and d.loc.line == 6 and "in hbm" in d.message
    )  # the kernel definition


def test_psum_tiles_in_a_loop_are_freed_per_iteration(tmp_path):
    path, _ = port(
        tmp_path,
        CUR,
        """
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 128), nl.bfloat16, buffer=nl.sbuf)
            m = nl.ndarray((128, 512), nl.bfloat16, buffer=nl.sbuf)
            nisa.memset(s, 0.0)
            nisa.memset(m, 0.0)
            for i in range(12):
                acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
                nisa.nc_matmul(acc, s, m)
                nisa.nc_matmul(acc, s, m)
            return a
    """,
    )
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    assert res.profile.peak_psum_banks == 1  # the previous tile died when the name was rebound


def test_rebinding_nl_results_in_a_loop_is_not_double_counted(tmp_path):
    # x and one exp result (80 KB/partition each) are live; while the next result is computed the
    # previous one is still bound to y, but it dies on rebinding: no capacity error, peak 160 KB
    path, _ = port(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            x = nl.zeros((128, 20000), nl.float32)
            for i in nl.affine_range(4):
                y = nl.exp(x)
            nl.store(out, value=nl.load(a))
            return out
    """,
    )
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    # x and the exp result; x is dead before the (4, 4) copy is made
    assert res.profile.peak_sbuf_bytes_per_partition == 2 * 80000


def test_three_live_results_exceed_capacity_by_a_spill(tmp_path):
    # x stays live across the add, which needs y and z only: x is spilled (a note)
    path, line = port(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            x = nl.zeros((128, 20000), nl.float32)
            for i in nl.affine_range(2):
                y = nl.exp(x)
                z = nl.add(y, 1.0)  # <-
            nl.store(out, value=nl.load(a))
            return out
    """,
    )
    res = simulate_kernel(load_kernel(path), [np.ones((4, 4), np.float32)], profile=True)
    notes = [w for w in res.warnings if w.code == "C2N3031"]
    assert len(notes) == 1 and notes[0].loc.line == line, res.warnings
    assert res.profile.peak_sbuf_bytes_per_partition == 3 * 80000


def test_affine_range_iterations_writing_the_same_output(tmp_path):
    expect(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 4), a.dtype, buffer=nl.shared_hbm)
            for i in nl.affine_range(2):
                t = nl.load(a[i * 128:(i + 1) * 128, :])
                nl.store(out, value=t)  # <-
            return out
    """,
        "C2N3030",
        inputs=[np.ones((256, 4), np.float32)],
    )


def test_affine_range_clash_in_a_later_run_of_an_inner_loop(tmp_path):
    # each run of the inner loop is its own loop: the first outer iteration is clean, the
    # second one's inner iterations write the same row block
    d = expect(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((256, 4), a.dtype, buffer=nl.shared_hbm)
            for m in nl.affine_range(2):
                for j in nl.affine_range(2):
                    r = m * 128 + (j - m * j) * 64
                    t = nl.load(a[r:r + 64, :])
                    nl.store(out[r:r + 64, :], value=t)  # <-
            return out
    """,
        "C2N3030",
        inputs=[np.ones((256, 4), np.float32)],
    )
    assert "iterations 0 and 1 " in d.message, d.message


def test_affine_range_writes_of_an_enclosing_loop_are_not_mixed_up(tmp_path):
    # the outer iteration rewrites what its own inner loop wrote: not a clash between the
    # outer loop's iterations, nor between the inner loop's
    path, _ = port(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((256, 4), a.dtype, buffer=nl.shared_hbm)
            for m in nl.affine_range(2):
                for j in nl.affine_range(2):
                    r = m * 128 + j * 64
                    nl.store(out[r:r + 64, :], value=nl.load(a[r:r + 64, :]))
                t = nl.load(a[m * 128:(m + 1) * 128, :])
                nl.store(out[m * 128:(m + 1) * 128, :], value=nl.add(t, 1.0))
            return out
    """,
    )
    a = np.arange(256 * 4, dtype=np.float32).reshape(256, 4)
    np.testing.assert_array_equal(simulate_kernel(load_kernel(path), [a]).outputs, a + 1)


def test_sequential_range_may_rewrite_outputs(tmp_path):
    path, _ = port(
        tmp_path,
        LEG,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 4), a.dtype, buffer=nl.shared_hbm)
            for i in nl.sequential_range(2):
                t = nl.load(a[i * 128:(i + 1) * 128, :])
                nl.store(out, value=t)
            for i in nl.affine_range(2):  # disjoint halves: fine
                nl.store(out[i * 64:(i + 1) * 64, :], value=nl.load(a[i * 64:(i + 1) * 64, :]))
            return out
    """,
    )
    a = np.arange(256 * 4, dtype=np.float32).reshape(256, 4)
    np.testing.assert_array_equal(simulate_kernel(load_kernel(path), [a]).outputs, a[:128])
