"""Notes on a scheduled port (C2N2509 small transfers, C2N2513 grid to loops, C2N2514 kept scalars)."""

from __future__ import annotations

from pathlib import Path

from cuda2nki.binding import load_binding
from cuda2nki.codegen.notes import port_notes
from cuda2nki.pipeline import port_file

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _by_code(kernel: str) -> dict[str, list]:
    res = port_file(CORPUS / f"{kernel}.cu")
    out: dict[str, list] = {}
    for d in res.diagnostics:
        out.setdefault(d.code, []).append(d)
    return out


def test_grid_becomes_loops_with_trip_counts() -> None:
    found = _by_code("norm/softmax_naive")
    (note,) = found["C2N2513"]
    assert "grid (ceil_div(N, 64)) x block (64)" in note.message
    assert "t < (N + 127) // 128 (2 trips)" in note.message  # N = 200 in the binding
    assert note.loc.line > 0


def test_kept_scalars_are_named_with_the_bindings_value() -> None:
    found = _by_code("basic/saxpy")
    (note,) = found["C2N2514"]
    assert "'alpha'" in note.message and str(note.severity) == "note"
    assert any("value is" in n for n in note.notes)
    assert "'n'" not in " ".join(d.message for d in found["C2N2514"])  # n comes from x.shape


def test_small_transfers_only_when_the_problem_is_small() -> None:
    res = port_file(CORPUS / "norm/softmax_naive.cu")
    small = {d.message.split("'")[1]: d for d in res.diagnostics if d.code == "C2N2509"}
    assert set(small) == {"input", "output"}
    assert "256 bytes per partition" in small["output"].message  # C = 64 fp32 per row
    b = load_binding(CORPUS / "norm/softmax_naive.toml")
    big = b.resolve({"N": 4096, "C": 2048})
    notes = port_notes(res.ir_tiles, big.scalars, b.grid, b.block, big.shapes)
    assert not [d for d in notes if d.code == "C2N2509"]  # 8 KiB rows: nothing to excuse
    assert [d for d in notes if d.code == "C2N2513"]


def test_long_launch_bounds_move_to_notes_with_the_tile_size_named() -> None:
    (note,) = _by_code("basic/vector_add")["C2N2513"]
    assert "loops over t (1 trip); t1 (0 trips); t2 (0 trips) inside" in note.message
    assert len(note.message) < 140  # nothing like N // (128 * min(512, max(1, ...)))
    assert "loop t < N // (128 * F)" in note.notes
    assert "where F = min(512, max(1, (N + 127) // 128))" in note.notes


def test_name_repeated_takes_the_call_that_spells_the_most() -> None:
    from cuda2nki.codegen.notes import name_repeated

    lines = ["t < M // min(64, max(1, K // 2))", "u < min(2, M % min(64, max(1, K // 2)))"]
    named, where = name_repeated(lines)
    assert named == ["t < M // F", "u < min(2, M % F)"]
    assert where == "F = min(64, max(1, K // 2))"
    assert name_repeated(["t < min(64, max(1, K // 2))"]) == (
        ["t < min(64, max(1, K // 2))"],
        None,
    )  # said once: nothing to name
    clash = ["t < F // min(64, max(1, K))", "u < min(64, max(1, K))"]
    assert name_repeated(clash) == (clash, None)  # F is a size of the kernel already
    assert name_repeated(clash, name="W")[0] == ["t < F // W", "u < W"]
    # the tail loops of a two-level tiling: the long tail bound is said twice, the tile size
    # inside it six times -- naming the tile size reads best
    f = "min(512, max(1, (n + 127) // 128))"
    tail = f"min(1, n % (128 * {f}) // {f})"
    named, where = name_repeated([f"t < n // (128 * {f})", f"t1 < {tail}", f"t7 < {tail}"])
    assert where == f"F = {f}" and named[1] == "t1 < min(1, n % (128 * F) // F)"


def test_launch_notes_of_a_kernel_with_two_loop_nests_name_the_tile_size() -> None:
    (note,) = _by_code("activation/activation_switch")["C2N2513"]
    assert "where F = min(512, max(1, (n + 127) // 128))" in note.notes
    assert all(len(n) < 60 for n in note.notes[:-1]), note.notes
