"""A file stopped at its time limit keeps the records of the kernels finished before."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.batch.job import Journal, read_journal
from cuda2nki.batch.migrate import JOURNAL_DIR, MigrateOptions, migrate

#: three kernels; the test makes the one named ``stall`` hang (workers are forked, so a patch
#: of the API in this process is what they run)
THREE = """__global__ void first_add(float* out, const float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + 1.0f;
}
__global__ void stall(float* y, const float* x, int m) {
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j < m) y[j] = 2.0f * x[j];
}
__global__ void after_stall(float* z, int count) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) z[t] = 0.0f;
}
void run(float* out, const float* a, float* y, const float* x, float* z, int n) {
    first_add<<<(n + 127) / 128, 128>>>(out, a, n);
    stall<<<(n + 255) / 256, 256>>>(y, x, n);
    after_stall<<<(n + 63) / 64, 64>>>(z, n);
}
"""


def _hang_on(monkeypatch: pytest.MonkeyPatch, name: str, attr: str) -> None:
    real = getattr(api, attr)

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("kernel") == name:
            time.sleep(600)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, attr, slow)


def _run(tmp_path: Path, check: bool, timeout: float) -> tuple[dict[str, dict], Path]:
    src = tmp_path / "src"
    src.mkdir()
    (src / "three.cu").write_text(THREE)
    single = THREE.split("__global__ void stall")[0]
    (src / "single.cu").write_text(
        single + "void go(float* o, const float* a, int n) {\n"
        "    first_add<<<(n + 127) / 128, 128>>>(o, a, n);\n}\n"
    )
    out = tmp_path / "out"
    res = migrate(MigrateOptions(src, out, check=check, timeout=timeout))
    return {(r["file"], r["kernel"]): r for r in res.records}, out


def test_a_kernel_hanging_in_its_port_loses_only_itself(tmp_path, monkeypatch) -> None:
    _hang_on(monkeypatch, "stall", "port")
    recs, out = _run(tmp_path, check=False, timeout=6)
    first = recs["three.cu", "first_add"]
    assert first["status"] == "automatic" and (out / first["port"]).is_file()
    for name in ("stall", "after_stall"):  # the hanging kernel and the one behind it
        r = recs["three.cu", name]
        assert r["status"] == "failed" and r["failure"] == "timeout", r
        assert [d["id"] for d in r["diagnostics"]] == ["C2N0006"]
        assert name in r["diagnostics"][0]["message"]
    assert ("three.cu", "") not in recs  # no file-level failure: the file was parsed
    assert recs["single.cu", "first_add"]["status"] == "automatic"
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["automatic"] == 2 and report["summary"]["failed"] == 2
    assert not list((out / JOURNAL_DIR).glob("*"))  # journals are dropped once read


def test_a_check_that_hangs_keeps_every_port_and_bucket(tmp_path, monkeypatch) -> None:
    _hang_on(monkeypatch, "stall", "check")
    # --check: the time limit is per kernel (30 s for three), so checks get ~8 s each
    recs, out = _run(tmp_path, check=True, timeout=10)
    first = recs["three.cu", "first_add"]
    assert first["status"] == "automatic" and first["verdict"] == "pass", first
    stall = recs["three.cu", "stall"]
    # ported before the check hung: its bucket is what porting gave (as --examine says), the
    # check's verdict is unverified
    assert stall["status"] == "automatic" and stall["failure"] == "timeout"
    assert stall["verdict"] == "unverified" and stall["check_ids"] == ["C2N0006"]
    assert "C2N0006" in stall["blocking"]
    assert stall["idiom"] and (out / stall["port"]).is_file()
    # every kernel is ported before any is checked: the one behind keeps its port and bucket
    after = recs["three.cu", "after_stall"]
    assert after["status"] == "automatic" and (out / after["port"]).is_file(), after
    assert after["verdict"] == "unverified" and after["check_ids"] == ["C2N0006"]
    examined = migrate(MigrateOptions(tmp_path / "src", tmp_path / "ex", mode="examine"))
    assert {(r["file"], r["kernel"]): r["status"] for r in examined.records} == {
        k: r["status"] for k, r in recs.items()
    }


def test_a_file_stopped_before_it_is_parsed_is_one_failed_record(tmp_path, monkeypatch) -> None:
    real = api.parse

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(600)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "parse", slow)
    src = tmp_path / "src"
    src.mkdir()
    (src / "three.cu").write_text(THREE)
    res = migrate(MigrateOptions(src, tmp_path / "out", timeout=2))
    [rec] = res.records
    assert rec["kernel"] == "" and rec["status"] == "failed" and rec["failure"] == "timeout"


def test_journal_keeps_the_latest_record_and_skips_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "j" / "x.jsonl"
    j = Journal(str(path))
    j.kernels(["a", "b"])
    j.ported({"kernel": "a", "status": "automatic"})
    j.add({"kernel": "a", "status": "automatic", "verdict": "pass"})
    j.ported({"kernel": "b", "status": "literal"})
    with path.open("a") as f:
        f.write('{"record": {"kernel": "b", "sta')  # killed mid-write
    names, recs = read_journal(path)
    assert names == ["a", "b"] and recs["a"].final and recs["a"].record["verdict"] == "pass"
    assert not recs["b"].final and recs["b"].record["status"] == "literal"
    Journal(str(path))  # a new run of the file starts a fresh journal
    assert read_journal(path) == (None, {})


#: a file of three kernels whose second is slow to check for real (one thread strides over
#: 1.5M elements: minutes in the interpreter), bound by a sidecar that names it alone
SLOW_SECOND = """__global__ void bias_add(float* dst, const float* src, int len) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < len) dst[k] = src[k] + 0.5f;
}
__global__ void slow_scale(float* out, const float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = 2.0f * x[i];
}
__global__ void negate(float* w, int size) {
    int q = threadIdx.x + blockDim.x * blockIdx.x;
    if (q < size) w[q] = -w[q];
}
void steps(float* dst, const float* src, float* out, const float* x, int len) {
    bias_add<<<(len + 255) / 256, 256>>>(dst, src, len);
    slow_scale<<<1, 32>>>(out, x, len);
    negate<<<(len + 127) / 128, 128>>>(dst, len);
}
"""
SLOW_TOML = """kernel = "slow_scale"
[launch]
grid = [1]
block = [1]
[params]
out = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
n = 1500000
"""


def test_a_slow_check_ends_at_its_share_and_the_others_are_checked(tmp_path: Path) -> None:
    """A file's checks share what is left of its time limit: the one whose CUDA kernel runs
    too long in the interpreter ends at its share, unverified (C2N0006), its port and bucket
    kept, and the kernels behind it are checked."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "steps.cu").write_text(SLOW_SECOND)
    (src / "steps.toml").write_text(SLOW_TOML)
    timeout = 8.0  # per kernel: the file has 24 s
    t0 = time.monotonic()
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True, timeout=timeout))
    took = time.monotonic() - t0
    recs = {r["kernel"]: r for r in res.records}
    assert set(recs) == {"bias_add", "slow_scale", "negate"}
    slow = recs["slow_scale"]
    assert slow["status"] == "automatic" and (tmp_path / "out" / slow["port"]).is_file()
    assert slow["verdict"] == "unverified" and slow["check_ids"] == ["C2N0006"], slow
    assert "C2N0006" in slow["blocking"] and "failure" not in slow
    assert any("did not finish" in d["message"] for d in slow["diagnostics"])
    for name in ("bias_add", "negate"):  # before and behind the slow one: both checked
        assert recs[name]["verdict"] == "pass" and "failure" not in recs[name], recs[name]
    assert took < 3 * timeout + 20  # the check alone takes minutes


def test_a_slow_file_is_stopped_at_its_limit_and_keeps_its_finished_kernels(
    tmp_path: Path, monkeypatch
) -> None:
    """Without the interpreter's deadline, the pool stops the worker at the file's limit: the
    kernel checked before keeps its verdict, those not finished are unverified (C2N0006)."""
    from cuda2nki.simt import deadline

    monkeypatch.setattr(deadline, "check", lambda: None)  # the workers are forked: they run this
    src = tmp_path / "src"
    src.mkdir()
    (src / "steps.cu").write_text(SLOW_SECOND)
    (src / "steps.toml").write_text(SLOW_TOML)
    timeout = 6.0  # per kernel: the file has 18 s
    t0 = time.monotonic()
    res = migrate(MigrateOptions(src, tmp_path / "out", check=True, timeout=timeout))
    took = time.monotonic() - t0
    recs = {r["kernel"]: r for r in res.records}
    assert set(recs) == {"bias_add", "slow_scale", "negate"}
    assert recs["bias_add"]["verdict"] == "pass" and "failure" not in recs["bias_add"]
    for name in ("slow_scale", "negate"):
        r = recs[name]
        assert r["status"] == "automatic" and r["failure"] == "timeout", r
        assert r["verdict"] == "unverified" and "C2N0006" in r["blocking"], r
    assert took < 3 * timeout + 20  # the limit was enforced (the check alone takes minutes)
