"""``migrate`` on multi-kernel files: each kernel gets its own binding (or none), no port is written
from a binding that does not validate, ``--check`` parses the file with the run's ``-D``/``-I``
options, and every kernel's record holds the file's diagnostics that concern it."""

from __future__ import annotations

import json
from pathlib import Path

from cuda2nki.batch.migrate import MigrateOptions, migrate

#: sizes come from -D only: parsed without them, the kernels do not compile
MACRO_SIZED = """\
__global__ void scale_rows(float* out, const float* in, float s, int rows) {
    int r = blockIdx.x;
    int c = threadIdx.x;
    if (r < rows && c < COLS) out[r * COLS + c] = s * in[r * COLS + c];
}

__global__ void add_one(float* y, const float* x, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
"""

MACRO_SIDECAR = """\
[kernels.scale_rows.launch]
grid = ["rows"]
block = [48]
[kernels.scale_rows.params]
out = { shape = ["rows", 48], dtype = "float32", role = "out" }
in = { shape = ["rows", 48], dtype = "float32", role = "in" }
s = 0.5
rows = 20

[kernels.add_one]
launch = { grid = ["ceil_div(n, 64)"], block = [64] }
[kernels.add_one.params]
y = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
n = 300
"""


def _report(out: Path) -> dict[str, dict]:
    report = json.loads((out / "report.json").read_text())
    return {r["kernel"]: r for r in report["kernels"]}


def test_checked_migration_of_a_macro_sized_multi_kernel_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "sized.cu").write_text(MACRO_SIZED)
    (src / "sized.toml").write_text(MACRO_SIDECAR)
    out = tmp_path / "out"
    opts = MigrateOptions(src, out, check=True, defines={"COLS": "48", "BLOCK": "64"})
    res = migrate(opts)
    got = _report(out)
    assert set(got) == {"scale_rows", "add_one"}
    for r in got.values():
        assert r["status"] == "automatic", r
        assert r["verdict"] == "pass" and r["numerics"] == "pass", r
        assert (out / r["port"]).is_file()
    assert res.report["summary"]["verdicts"] == {"pass": 2}


TWO = """\
#include "not_here.cuh"

__global__ void scale(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

__global__ void shift(float* out, const float* in, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) out[j] = in[j] + 1.0f;
}

__global__ void helped(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = from_the_missing_header(i);
}

void launch(float* o, const float* i, int count) {
    shift<<<(count + 255) / 256, 256>>>(o, i, count);
}
"""

SCALE = """\
kernel = "scale"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
y = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
a = 2.0
n = 1000
"""


def _unlaunched(text: str) -> str:
    """``shift`` laid out by its block's shape (a row per blockIdx.y): with no launch site, no
    default launch either, so its inferred binding is incomplete."""
    return text.replace(
        "if (j < m) out[j] = in[j] + 1.0f;",
        "if (j < m) out[blockIdx.y * m + j] = in[blockIdx.y * m + j] + 1.0f;",
    )


def _two(tmp_path: Path, sidecar: str) -> Path:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "two.cu").write_text(TWO)
    (src / "two.toml").write_text(sidecar)
    return src


def test_a_sidecar_binds_only_the_kernel_it_names(tmp_path: Path) -> None:
    out = tmp_path / "out"
    migrate(MigrateOptions(_two(tmp_path, SCALE), out, check=True))
    got = _report(out)
    assert got["scale"]["status"] == "automatic" and got["scale"]["verdict"] == "pass"
    # shift: inferred instead (the sidecar binds scale): its launch from the launcher, m a size
    # (check chooses its values), so the port is made and checked
    shift = got["shift"]
    assert shift["status"] == "automatic" and shift["verdict"] == "pass", shift
    ids = {d["id"] for d in shift["diagnostics"]}
    assert "C2N0008" in ids
    assert (out / "two" / "shift.py").exists()


def test_a_kernel_without_a_launch_is_reported_with_what_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    src = _two(tmp_path, SCALE)
    (src / "two.cu").write_text(_unlaunched(TWO.split("void launch")[0]))
    migrate(MigrateOptions(src, out, check=True))
    shift = _report(out)["shift"]
    assert shift["status"] == "manual" and shift["port"] is None
    assert "C2N2502" in shift["blocking"]
    ids = {d["id"] for d in shift["diagnostics"]}
    assert {"C2N0008", "C2N2101"} <= ids
    assert any("launch" in d["message"] for d in shift["diagnostics"] if d["id"] == "C2N2101")
    assert not (out / "two" / "shift.py").exists()


def test_no_port_from_a_named_binding_that_does_not_validate(tmp_path: Path) -> None:
    out = tmp_path / "out"
    migrate(MigrateOptions(_two(tmp_path, SCALE.replace("a = 2.0\n", "")), out))
    scale = _report(out)["scale"]
    assert scale["status"] == "manual" and scale["port"] is None
    assert scale["blocking"] == ["C2N0003"]
    assert "'a' has no value" in " ".join(d["message"] for d in scale["diagnostics"])
    assert not (out / "two" / "scale.py").exists()


def test_every_record_holds_the_file_diagnostics_that_concern_its_kernel(tmp_path: Path) -> None:
    for mode in ("port", "examine"):
        out = tmp_path / mode
        migrate(MigrateOptions(_two(tmp_path, SCALE), out, mode=mode))
        got = _report(out)
        helped = got["helped"]
        assert helped["status"] == "refused"
        # the cause (the missing include) next to its knock-on (the unknown function)
        assert {d["id"] for d in helped["diagnostics"]} >= {"C2N1004", "C2N1021"}, mode
        # a healthy kernel's record: the include warning, but not its neighbour's error
        scale = got["scale"]
        assert "C2N1004" in {d["id"] for d in scale["diagnostics"]}, mode
        assert "C2N1021" not in {d["id"] for d in scale["diagnostics"]}, mode
        assert scale["blocking"] == [], mode
        for name in ("report.csv", "report.html"):
            assert "C2N1004" in (out / name).read_text(), (mode, name)


#: no sidecar: sizes from -D macros, launches through a launcher and main
INFERRED = """\
__global__ void scale_rows(float* out, const float* in, float s, int rows) {
    int r = blockIdx.x;
    int c = threadIdx.x;
    if (r < rows && c < COLS) out[r * COLS + c] = s * in[r * COLS + c];
}

__global__ void add_one(float* y, const float* x, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

void launch(float* o, const float* i, float s, int rows, int n) {
    dim3 block(COLS);
    scale_rows<<<rows, block>>>(o, i, s, rows);
    add_one<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(o, i, n);
}

int main() {
    float *o, *i;
    const int rows = 24;
    launch(o, i, 0.25f, rows, rows * COLS);
}
"""


def test_inferred_bindings_of_a_macro_sized_file_are_checked(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "inferred.cu").write_text(INFERRED)
    defines = {"COLS": "48", "BLOCK": "64"}
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, defines=defines))
    got = _report(out)
    assert set(got) == {"scale_rows", "add_one"}
    for r in got.values():
        assert r["status"] == "automatic", r
        assert r["verdict"] == "pass" and r["numerics"] == "pass", r
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine", defines=defines))
    assert {k: r["status"] for k, r in _report(dry).items()} == {
        k: r["status"] for k, r in got.items()
    }


def test_examine_lists_the_missing_binding_items(tmp_path: Path) -> None:
    src = _two(tmp_path, SCALE)
    (src / "two.cu").write_text(_unlaunched(TWO.split("void launch")[0]))
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, mode="examine"))
    shift = _report(out)["shift"]
    assert shift["status"] == "manual"
    assert "the launch configuration" in shift["missing"]


#: kernels whose shapes come from their index expressions only (symbolic execution refuses the
#: shared-memory reductions and the row pointers), launched by host code with a loop over
#: candidate block sizes, a launcher chain and dynamic shared memory
SYNTAX_ONLY = """\
__global__ void row_sum(float* sums, const float* inp, int N, int C, int bs) {
    extern __shared__ float part[];
    int row = blockIdx.x;
    const float* x = inp + row * C;
    float s = 0.0f;
    for (int i = threadIdx.x; i < C; i += bs) s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = bs / 2; k >= 1; k /= 2) {
        __syncthreads();
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    }
    if (threadIdx.x == 0) sums[row] = part[0];
}

__global__ void scale_btc(float* out, const float* inp, const float* w, int B, int T, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * T * C) return;
    int c = idx % C;
    out[idx] = inp[idx] * w[c];
}

__global__ void tile_copy(float* dst, const float* src, int rows, int cols) {
    __shared__ float tile[32];
    int r = blockIdx.y;
    int c = blockIdx.x * 32 + threadIdx.x;
    if (r < rows && c < cols) {
        tile[threadIdx.x] = src[r * cols + c];
        __syncthreads();
        dst[r * cols + c] = tile[threadIdx.x] + 1.0f;
    }
}

void sums(float* s, const float* x, int N, int C, int bs) {
    row_sum<<<N, bs, bs * sizeof(float)>>>(s, x, N, C, bs);
}

int main() {
    float *s, *x, *o, *w, *d;
    const int B = 4, T = 8, C = 40;
    int sizes[] = {32, 64};
    for (int j = 0; j < 2; j++) sums(s, x, B * T, C, sizes[j]);
    scale_btc<<<(B * T * C + 127) / 128, 128>>>(o, x, w, B, T, C);
    dim3 grid((C + 31) / 32, B * T);
    tile_copy<<<grid, 32>>>(d, x, B * T, C);
}
"""

#: what marks a port that cannot run: its check ended in an error, or the port raised or died
_CRASH_IDS = {"C2N4014", "C2N4018"}


def test_checked_ports_from_index_expressions_never_crash(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "syntax.cu").write_text(SYNTAX_ONLY)
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True, timeout=600))
    got = _report(out)
    assert set(got) == {"row_sum", "scale_btc", "tile_copy"}
    for r in got.values():
        assert not r["missing"], r
        assert r["port"] is not None, r
        assert r.get("verdict") not in (None, "error"), r
        assert not _CRASH_IDS & set(r.get("check_ids", [])), r
    assert got["scale_btc"]["numerics"] == "pass"
    dry = tmp_path / "dry"
    migrate(MigrateOptions(src, dry, mode="examine"))
    assert {k: r["status"] for k, r in _report(dry).items()} == {
        k: r["status"] for k, r in got.items()
    }


#: the sidecar's 'x' is shorter than the kernel reads (a wrong binding the user wrote)
SHORT = """\
__global__ void twice(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""


def test_a_check_that_cannot_run_says_why_in_the_record(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "short.cu").write_text(SHORT)
    (src / "short.toml").write_text(
        'kernel = "twice"\n[launch]\ngrid = ["ceil_div(n, 32)"]\nblock = [32]\n[params]\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'x = { shape = [8], dtype = "float32", role = "in" }\nn = 40\n'
    )
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, check=True))
    rec = _report(out)["twice"]
    assert rec["status"] == "automatic" and rec["verdict"] == "error", rec
    assert rec["check_ids"] == ["C2N1500"]
    (why,) = [d for d in rec["diagnostics"] if d["id"] == "C2N1500"]
    assert "'x'" in why["message"] and why["line"] == 3
    assert "C2N1500" in (out / "report.csv").read_text()
