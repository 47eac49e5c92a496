"""A header's template kernels instantiated by the file that launches them: the header takes the
instantiation of the including file's launch (with the device functions it calls), so that its
kernels are analysed, bound and checked without a ``--template`` option."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.batch.migrate import MigrateOptions, migrate
from cuda2nki.frontend import parse_file
from cuda2nki.lift.infer import binding_from_inference

#: int template parameters, a templated device helper, a typename parameter
TILES = """#pragma once
template <int W>
__device__ float widen(float x) {
    return x * (float)W + 0.5f;
}
template <const unsigned int ROWS, const unsigned int W>
__global__ void row_windows(int m, int n, const float* src, float* dst) {
    const int r = blockIdx.y * ROWS + threadIdx.x / 32;
    const int c = blockIdx.x * 32 + threadIdx.x % 32;
    if (r < m && c < n) dst[r * n + c] = widen<W>(src[r * n + c]);
}
template <typename T, int SCALE>
__global__ void scaled_copy(T* out, const T* in, int count) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x)
        out[i] = in[i] * (T)SCALE;
}
"""

#: launches in a runner: constants and macros as template arguments, dim3 geometry
RUNNER = """#include "{include}"
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
const int ROWS_PER_BLOCK = {rows};
void run_windows(int M, int N, const float* dA, float* dB) {{
    dim3 block(32 * ROWS_PER_BLOCK);
    dim3 grid(CEIL_DIV(N, 32), CEIL_DIV(M, ROWS_PER_BLOCK));
    row_windows<ROWS_PER_BLOCK, {width}><<<grid, block>>>(M, N, dA, dB);
}}
void run_copy(float* o, const float* i, int len) {{
    scaled_copy<float, 3><<<CEIL_DIV(len, 128), 128>>>(o, i, len);
}}
"""


def _tree(tmp_path: Path, *, rows: int = 4, width: int = 2, nested: bool = False) -> Path:
    src = tmp_path / "src"
    kdir = src / "kernels" if nested else src
    kdir.mkdir(parents=True)
    (kdir / "tiles.cuh").write_text(TILES)
    include = "kernels/tiles.cuh" if nested else "tiles.cuh"
    (src / "runner.cu").write_text(RUNNER.format(include=include, rows=rows, width=width))
    return kdir / "tiles.cuh"


@pytest.mark.parametrize(("rows", "width", "nested"), [(4, 2, False), (8, 3, True), (2, 1, True)])
def test_a_header_template_takes_the_runners_instantiation(
    tmp_path: Path, rows: int, width: int, nested: bool
) -> None:
    tu = parse_file(_tree(tmp_path, rows=rows, width=width, nested=nested))
    k = tu.function("row_windows")
    assert k is not None and dict(k.template_args) == {"ROWS": rows, "W": width}
    assert tu.function(f"widen<{width}>") is not None  # the helper instance came along
    assert not any(d.code == "C2N1023" for d in tu.diagnostics)
    bnd, _ = binding_from_inference(tu, "row_windows")
    assert bnd is not None and list(bnd.block) == [32 * rows]
    assert tuple(bnd.tensor("dst").shape) == ("m", "n")
    copy = tu.function("scaled_copy")
    assert copy is not None and copy.template_args[1] == ("SCALE", 3)
    bnd, _ = binding_from_inference(tu, "scaled_copy")
    assert bnd is not None and bnd.tensor("out").dtype == "float32"


def test_the_first_launch_chooses_among_several_instantiations(tmp_path: Path) -> None:
    header = _tree(tmp_path)
    runner = header.parent / "runner.cu"
    runner.write_text(
        runner.read_text()
        + "void run_wide(int M, int N, const float* a, float* b) {\n"
        + "    row_windows<2, 5><<<dim3(CEIL_DIV(N, 32), CEIL_DIV(M, 2)), 64>>>(M, N, a, b);\n}\n"
    )
    tu = parse_file(header)
    k = tu.function("row_windows")
    assert k is not None and dict(k.template_args) == {"ROWS": 4, "W": 2}
    sites = [s for s in tu.launch_sites if s.kernel == "row_windows"]
    assert [s.loc.line for s in sites] == [7] and sites[0].instance == "row_windows"
    assert [f.name for f in tu.kernels].count("row_windows") == 1


def test_a_template_nobody_launches_takes_assumed_arguments(tmp_path: Path) -> None:
    """No including file launches the header's kernels: each is instantiated with assumed
    arguments and says so; the two-dimensional one still has no launch to be bound by."""
    header = _tree(tmp_path)
    (header.parent / "runner.cu").write_text('#include "tiles.cuh"\nint main() { return 0; }\n')
    tu = parse_file(header)
    assert not any(d.code == "C2N1023" for d in tu.diagnostics)
    said = [d.message for d in tu.diagnostics if d.code == "C2N2100"]
    assert any("ROWS=128, W=128 for 'row_windows'" in m for m in said), said
    assert any("T=float32, SCALE=128 for 'scaled_copy'" in m for m in said), said
    assert binding_from_inference(tu, "row_windows")[0] is None
    assert binding_from_inference(tu, "scaled_copy")[0] is not None


def test_migrate_checks_the_instantiated_header_kernels(tmp_path: Path) -> None:
    header = _tree(tmp_path, nested=True)
    res = migrate(MigrateOptions(tmp_path / "src", tmp_path / "out", check=True, timeout=600))
    rel = str(header.relative_to(tmp_path / "src"))
    recs = {r["kernel"]: r for r in res.records if r["file"] == rel}
    assert set(recs) == {"row_windows", "scaled_copy"}
    for r in recs.values():
        assert r["status"] in ("automatic", "literal") and r["verdict"] == "pass", r


@pytest.mark.parametrize(
    "broken",
    [
        "__global__ void bad(float* p) { mystery_t q; p[0] = 1.0f; }\n",
        "__device__ float helper(float x) { return undeclared_thing + x; }\n"
        "__global__ void bad(float* p) { p[threadIdx.x] = helper(1.0f); }\n",
    ],
)
def test_an_error_in_a_header_is_the_headers_not_the_runners(tmp_path: Path, broken: str) -> None:
    header = _tree(tmp_path, nested=True)
    header.write_text(TILES + broken)
    res = migrate(MigrateOptions(tmp_path / "src", tmp_path / "out", mode="examine"))
    by_file = {(r["file"], r["kernel"]): r["status"] for r in res.records}
    assert by_file[("runner.cu", "")] == "none"
    assert by_file[("kernels/tiles.cuh", "bad")] == "refused"
    assert res.report["summary"]["kernels"] == 3 and res.report["summary"]["failed"] == 0


def test_an_error_of_the_runner_itself_still_fails_it(tmp_path: Path) -> None:
    header = _tree(tmp_path, nested=True)
    runner = header.parent.parent / "runner.cu"
    runner.write_text(runner.read_text() + "__device__ float own(float x) { return nope + x; }\n")
    res = migrate(MigrateOptions(tmp_path / "src", tmp_path / "out", mode="examine"))
    (rec,) = [r for r in res.records if r["file"] == "runner.cu"]
    assert rec["status"] == "failed" and rec["blocking"] == ["C2N1020"]


#: a template kernel with its template launcher; the type comes from the files using them
LIBRARY = """#pragma once
template <typename E> struct span_of { E* base; int len; };
template <typename T>
__global__ void halve_each(T* v, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v[i] = v[i] / (T)2;
}
template <typename T>
void halve_all(span_of<T>& s) { halve_each<T><<<(s.len + 127) / 128, 128>>>(s.base, s.len); }
"""

#: the ways a library translation unit fixes the launcher's type
USERS = {
    "explicit_instantiation": ("template void halve_all<double>(span_of<double>&);\n", "float64"),
    "deduced_instantiation": ("template void halve_all(span_of<int>& s);\n", "int32"),
    "caller_local": ("int main() { span_of<float> data; halve_all(data); return 0; }\n", "float32"),
    "template_caller_chain": (
        "template <typename U> void step(span_of<U>& s, int k) { for (int j = 0; j < k; ++j)"
        " halve_all(s); }\ntemplate void step(span_of<short>&, int);\n",
        "int16",
    ),
}


@pytest.mark.parametrize("case", sorted(USERS))
def test_a_header_template_launcher_takes_the_type_of_its_users(tmp_path: Path, case: str) -> None:
    src, dtype = USERS[case]
    (tmp_path / "lib").mkdir()
    header = tmp_path / "lib" / "halve.cuh"
    header.write_text(LIBRARY)
    (tmp_path / "lib" / "halve.cu").write_text('#include "halve.cuh"\n' + src)
    tu = parse_file(header)
    assert not any(d.code == "C2N1023" for d in tu.diagnostics), tu.diagnostics
    bnd, _ = binding_from_inference(tu, "halve_each")
    assert bnd is not None and bnd.tensor("v").dtype == dtype
    assert list(bnd.block) == [128]
