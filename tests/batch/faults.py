"""Fault files for migration tests and the kill -9 helper (shared by the fast and slow tiers)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: a kernel the interpreter runs for minutes under --check (one 32-thread block strides 40M elements)
HANG = """__global__ void slow_scale(float* out, const float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = 2.0f * x[i];
}
"""
HANG_TOML = """kernel = "slow_scale"
[launch]
grid = [1]
block = [32]
[params]
out = { shape = ["n"], dtype = "float32", role = "out" }
x = { shape = ["n"], dtype = "float32", role = "in" }
n = 40000000
"""
#: the same kernel bound to 4e9 elements: checking it allocates without bound
HOG_TOML = (
    HANG_TOML.replace("grid = [1]", 'grid = ["ceil_div(n, 256)"]')
    .replace("block = [32]", "block = [256]")
    .replace("n = 40000000", "n = 4000000000")
)
#: object-like macros that double at each level: preprocessing allocates without bound
MACRO_BOMB = "\n".join(
    ["#define L0 1.0f"]
    + [f"#define L{i} (L{i - 1} + L{i - 1})" for i in range(1, 40)]
    + [
        "__global__ void bomb(float* x, int n) {",
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "    if (i < n) x[i] = L39;",
        "}",
    ]
)
#: not a text file (NUL bytes), whatever its name; Latin-1 bytes alone are read (see
#: tests/test_fileio.py)
NOT_TEXT = b"\x7fELF\x02\x01\x01\x00\x00\x00__global__ void k(float* x) { x[0] = 1.0f; }\n"


def add_check_faults(src: Path) -> None:
    """``hang.cu`` (times out under --check) and ``hog.cu`` (exhausts memory under --check)."""
    (src / "hang.cu").write_text(HANG)
    (src / "hang.toml").write_text(HANG_TOML)
    (src / "hog.cu").write_text(HANG.replace("slow_scale", "hog_scale"))
    (src / "hog.toml").write_text(HOG_TOML.replace("slow_scale", "hog_scale"))


def add_file_faults(src: Path, elsewhere: Path) -> None:
    """A binary file named .cu, an unreadable file (a link to nothing) and a link loop."""
    (src / "not_text.cu").write_bytes(NOT_TEXT)
    (src / "dangling.cu").symlink_to(elsewhere / "nowhere.cu")
    (src / "loop.cu").symlink_to(src / "loop.cu")


def kill_after(src: Path, out: Path, files: int, jobs: int, limit_s: float = 600) -> None:
    """Start ``cuda2nki migrate`` and ``kill -9`` it (workers included) once ``files`` files are
    cached."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "cuda2nki.cli.main", "migrate", str(src), "-o", str(out), "-q"]
    proc = subprocess.Popen([*cmd, "--jobs", str(jobs)], env=env, start_new_session=True)
    cache = out / ".cuda2nki" / "cache"
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if cache.is_dir() and sum(1 for p in cache.glob("*.json")) >= files:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def csv_without_time(path: Path) -> list[list[str]]:
    """The rows of a report.csv without its ``seconds`` column (times differ between runs)."""
    rows = list(csv.reader(path.read_text().splitlines()))
    col = rows[0].index("seconds")
    return [r[:col] + r[col + 1 :] for r in rows]
