"""``migrate`` counts kernels as source definitions: a template kernel's instantiations are
ported one by one and reported as one record that lists them; a port's record says where its
binding came from, with the inference's notes (which value each item got, and from where)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuda2nki.batch.instances import by_definition, definition
from cuda2nki.batch.migrate import MigrateOptions, migrate

#: two template kernels (a value parameter spelled as a literal and as a macro, a type
#: parameter), each launched with two argument lists, and a plain kernel
TEMPLATES = """\
#define WIDE 256
template <int BS>
__global__ void scale_by(float* dst, const float* src, float k, int len) {
    int t = blockIdx.x * BS + threadIdx.x;
    if (t < len) dst[t] = k * src[t];
}
template <typename T>
__global__ void accumulate(T* acc, const T* v, int count) {
    int j = threadIdx.x + blockDim.x * blockIdx.x;
    if (j < count) acc[j] += v[j];
}
__global__ void negate(float* o, const float* x, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) o[i] = -x[i];
}
int main() {
    int len = 700;
    float *a, *b;
    int *ia, *ib;
    scale_by<128><<<(len + 127) / 128, 128>>>(b, a, 1.5f, len);
    scale_by<WIDE><<<(len + WIDE - 1) / WIDE, WIDE>>>(b, a, 1.5f, len);
    accumulate<float><<<(len + 63) / 64, 64>>>(b, a, len);
    accumulate<int><<<(len + 63) / 64, 64>>>(ib, ia, len);
    negate<<<(len + 127) / 128, 128>>>(b, a, len);
    return 0;
}
"""

SIDECAR = """\
[kernels.negate]
launch = { grid = ["ceil_div(m, 32)"], block = [32] }
[kernels.negate.params]
o = { shape = ["m"], dtype = "float32", role = "out" }
x = { shape = ["m"], dtype = "float32", role = "in" }
m = 100
"""


def _records(tmp_path: Path, sidecar: bool = False) -> dict:
    src = tmp_path / "src"
    src.mkdir()
    (src / "tpl.cu").write_text(TEMPLATES)
    if sidecar:
        (src / "tpl.toml").write_text(SIDECAR)
    out = tmp_path / "out"
    migrate(MigrateOptions(src, out, mode="examine"))
    return json.loads((out / "report.json").read_text())


def test_a_template_kernel_is_one_definition_listing_its_instantiations(tmp_path: Path) -> None:
    report = _records(tmp_path)
    got = {r["kernel"]: r for r in report["kernels"]}
    assert set(got) == {"scale_by", "accumulate", "negate"}
    assert report["summary"]["kernels"] == 3
    assert [i["kernel"] for i in got["scale_by"]["instantiations"]] == [
        "scale_by<128>",
        "scale_by<256>",
    ]
    assert len(got["accumulate"]["instantiations"]) == 2
    assert "instantiations" not in got["negate"]
    assert all(r["status"] == "automatic" for r in got.values()), got
    csv = (tmp_path / "out" / "report.csv").read_text().splitlines()
    assert len(csv) == 4 and "scale_by<128> scale_by<256>" in csv[1 + sorted(got).index("scale_by")]


def test_a_port_record_says_where_its_binding_came_from(tmp_path: Path) -> None:
    report = _records(tmp_path, sidecar=True)
    got = {r["kernel"]: r for r in report["kernels"]}
    assert got["negate"]["binding"] == "sidecar"
    assert not [d for d in got["negate"]["diagnostics"] if d["id"] == "C2N2100"]
    assert got["scale_by"]["binding"] == "inferred"
    notes = [d["message"] for d in got["scale_by"]["diagnostics"] if d["id"] == "C2N2100"]
    assert any("k = 1.5" in m for m in notes), notes
    assert any(m.startswith("inferred len = 700") and "int len = 700" in m for m in notes), notes
    assert any("launch grid" in m and "scale_by<256>" in m for m in notes), notes
    html = (tmp_path / "out" / "report.html").read_text()
    assert "inferred binding" in html and "sidecar binding" in html


def _rec(kernel: str, status: str, verdict: str | None = None, **kw: object) -> dict:
    rec = {
        "file": "f.cu",
        "kernel": kernel,
        "status": status,
        "idiom": None,
        "port": f"f/{kernel}.py" if status in ("automatic", "literal") else None,
        "lines": 4,
        "diagnostics": [],
        "blocking": [],
        "missing": [],
        "binding": None,
        **kw,
    }
    if verdict is not None:
        rec.update(verdict=verdict, numerics=verdict, check_ids=[])
    return rec


@pytest.mark.parametrize(
    ("instances", "status", "verdict"),
    [
        ([("automatic", "pass"), ("automatic", "pass")], "automatic", "pass"),
        ([("automatic", "pass"), ("literal", "fail")], "literal", "fail"),
        ([("literal", "pass"), ("automatic", "error")], "literal", "error"),
        ([("automatic", "pass"), ("manual", None)], "manual", "pass"),
        ([("refused", None), ("automatic", None)], "refused", None),
    ],
)
def test_a_definition_takes_the_least_favourable_outcome(
    instances: list[tuple[str, str | None]], status: str, verdict: str | None
) -> None:
    recs = [_rec(f"tile<{16 * (n + 1)}>", s, v) for n, (s, v) in enumerate(instances)]
    (merged,), secs = by_definition(recs, {r["kernel"]: 0.5 for r in recs})
    assert merged["kernel"] == "tile" and merged["status"] == status
    assert merged.get("verdict") == verdict
    assert secs == {"tile": 1.0}
    assert [i["kernel"] for i in merged["instantiations"]] == ["tile<16>", "tile<32>"]


def test_plain_kernels_and_other_files_stay_apart() -> None:
    recs = [
        _rec("tile<16>", "automatic"),
        _rec("tile", "literal", file="g.cu"),
        _rec("x", "manual"),
    ]
    merged, _ = by_definition(recs)
    assert [(r["file"], r["kernel"]) for r in merged] == [
        ("f.cu", "tile"),
        ("g.cu", "tile"),
        ("f.cu", "x"),
    ]
    assert merged[1] is recs[1] and merged[2] is recs[2]


@pytest.mark.parametrize(
    ("name", "base"),
    [("scan<256>", "scan"), ("mm<16, float32>", "mm"), ("plain", "plain"), ("", "")],
)
def test_definition_of_an_instantiation_name(name: str, base: str) -> None:
    assert definition(name) == base


@pytest.mark.parametrize(
    ("text", "check", "want"),
    [
        ("__global__ void a() {}\n__global__ void b() {}\n__global__ void c() {}\n", True, 90.0),
        ("__global__ void a() {}\n__global__ void b() {}\n", False, 60.0),
        ("// no kernels here: a header\nint helper(int x);\n", False, 30.0),
        ("// no kernels here: a header\nint helper(int x);\n", True, 30.0),
        ("template <int B>\n__global__\nvoid t(float* y) {}\n", True, 30.0),
    ],
)
def test_a_file_has_its_time_limit_per_kernel(
    tmp_path: Path, text: str, check: bool, want: float
) -> None:
    from cuda2nki.batch.migrate import time_limit

    (tmp_path / "k.cu").write_text(text)
    opts = MigrateOptions(tmp_path, tmp_path / "out", check=check, timeout=30.0)
    assert time_limit(opts, tmp_path / "k.cu") == want
