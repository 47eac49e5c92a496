"""Index data that scatters, or picks elements of an array it also reaches data-free
(:mod:`cuda2nki.lift.valranges`, :mod:`cuda2nki.lift.rowindex`, the address reads of
:mod:`cuda2nki.lift.extentaccess`).

``atomicAdd(&hist[bin[i]], 1)``, ``y[perm[i]] = x[i]``, ``out[idx[i] * C + c] += v``: the
target has its extent from elsewhere (an allocation, a size, another access), so the index
input gets the values that keep the CUDA kernel inside it, and the index input itself the
extent of its own data-free reads.  The host launchers allocate no index array: its shape comes
from the kernel's reads alone."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding
from cuda2nki.lift.rowindex import row_count

#: kernel source -> (index input, its expected shape, its expected range)
SCATTERS = {
    "atomic-histogram-guarded": (
        """
__global__ void k(const int* bin, int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[bin[i]], 1);
}
void go(const int* b, int* h, int n) {
    const int nb = 37;
    cudaMalloc(&h, nb * sizeof(int));
    k<<<(n + 255) / 256, 256>>>(b, h, n);
}""",
        "bin",
        ["n"],
        [0, 37],
    ),
    "grid-stride-scatter-add": (
        """
__global__ void k(const int* where, const float* v, float* acc, int count, int slots) {
    for (int t = threadIdx.x + blockIdx.x * blockDim.x; t < count; t += gridDim.x * blockDim.x)
        atomicAdd(&acc[where[t]], v[t]);
}
void go(const int* w, const float* v, float* a, int c, int s) {
    cudaMalloc(&a, s * sizeof(float));
    k<<<64, 128>>>(w, v, a, c, s);
}""",
        "where",
        ["count"],
        [0, "slots"],
    ),
    "pointer-plus-class": (
        """
__global__ void k(const int* cls, float* sums, const float* w, int n, int nc) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sums + cls[i], w[i]);
}
void go(const int* c, float* s, const float* w, int n, int nc) {
    cudaMalloc(&s, nc * sizeof(float));
    k<<<(n + 127) / 128, 128>>>(c, s, w, n, nc);
}""",
        "cls",
        ["n"],
        [0, "nc"],
    ),
    "rows-block-per-entry": (
        """
__global__ void k(const int* dst, const float* src, float* out, int n, int C, int R) {
    int e = blockIdx.x;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        if (e < n) atomicAdd(&out[dst[e] * C + c], src[e * C + c]);
}
void go(const int* d, const float* s, float* o, int n, int C, int R) {
    cudaMalloc(&o, R * C * sizeof(float));
    k<<<n, 64>>>(d, s, o, n, C, R);
}""",
        "dst",
        ["n"],
        [0, "R"],
    ),
    "rows-flat-div-mod": (
        """
__global__ void k(const int* idx, const float* src, float* out, int n, int C, int R) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < R * C) out[i] = 0.0f;
    if (i < n * C) atomicAdd(&out[i % C + C * idx[i / C]], src[i]);
}
void go(const int* a, const float* s, float* o, int n, int C, int R) {
    k<<<(n * C + 255) / 256, 256>>>(a, s, o, n, C, R);
}""",
        "idx",
        ["n"],
        [0, "R"],
    ),
    "permutation-into-two-outputs": (
        """
__global__ void k(const int* perm, const float* x, const float* w, float* y, float* z,
                  int n, int m, int q) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[perm[i]] = x[i]; z[perm[i]] = w[i]; }
}
void go(const int* p, const float* x, const float* w, float* y, float* z, int n, int m, int q) {
    cudaMalloc(&y, m * sizeof(float));
    cudaMalloc(&z, q * sizeof(float));
    k<<<(n + 127) / 128, 128>>>(p, x, w, y, z, n, m, q);
}""",
        "perm",
        ["n"],
        [0, "min(m, q)"],
    ),
}

#: arrays read through index data and accessed data-free: the data reach their extent
MIXED = {
    "inout-atomic-grid-stride": (
        """
__global__ void k(float* u, const int* nbr, int cells) {
    for (int c = threadIdx.x + blockIdx.x * blockDim.x; c < cells; c += blockDim.x * gridDim.x)
        atomicAdd(&u[nbr[c]], 0.5f * u[c]);
}
void go(float* u, const int* nb, int cells) { k<<<64, 128>>>(u, nb, cells); }""",
        "nbr",
        ["cells"],
        [0, "cells"],
    ),
    "inout-dereferenced-offset": (
        """
__global__ void k(float* u, const int* other, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) u[i] = 0.5f * (u[i] + *(u + other[i]));
}
void go(float* u, const int* o, int n) { k<<<(n + 127) / 128, 128>>>(u, o, n); }""",
        "other",
        ["n"],
        [0, "n"],
    ),
    "inout-rows": (
        """
__global__ void k(float* a, const int* link, int rows, int width) {
    int r = blockIdx.x; int c = threadIdx.x;
    if (r < rows && c < width) a[r * width + c] = a[r * width + c] + a[link[r] * width + c];
}
void go(float* a, const int* l, int rows, int width) { k<<<rows, 64>>>(a, l, rows, width); }""",
        "link",
        ["rows"],
        [0, "rows"],
    ),
}


def _params(src: str) -> dict:
    tu = parse_source(src, "s.cu")
    bnd, diags = binding_from_inference(tu, "k")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    return infer_binding(tu, "k")[0]["params"]


def _same(got: object, want: object) -> bool:
    if isinstance(want, int):
        env = {"n": 100, "nb": 37}
        return eval_c_expr(str(got), env) == want
    return str(got).replace(" ", "") == str(want).replace(" ", "")


@pytest.mark.parametrize("spelling", sorted(SCATTERS) + sorted(MIXED))
def test_index_data_takes_the_extent_of_what_it_addresses(spelling: str) -> None:
    src, data, shape, (lo, hi) = {**SCATTERS, **MIXED}[spelling]
    spec = _params(src)[data]
    assert spec.get("shape") == shape, spec
    assert "range" in spec, spec
    assert spec["range"][0] == lo and _same(spec["range"][1], hi), spec


def test_the_binding_names_every_array_the_range_keeps_to() -> None:
    src = SCATTERS["permutation-into-two-outputs"][0]
    _, diags = infer_binding(parse_source(src, "s.cu"), "k")
    texts = [d.message for d in diags if d.code == "C2N2100" and "'perm' values" in d.message]
    assert texts and "of 'y'" in texts[0] and "of 'z'" in texts[0], texts


def test_rows_that_do_not_divide_the_extent_give_no_range() -> None:
    """``out`` of ``m`` elements holds no whole number of rows of ``C``: no row count."""
    src = """
__global__ void k(const int* idx, const float* src, float* out, int n, int C, int m) {
    int e = blockIdx.x; int c = threadIdx.x;
    if (e < n && c < C) atomicAdd(&out[idx[e] * C + c], src[e * C + c]);
}
void go(const int* a, const float* s, float* o, int n, int C, int m) {
    cudaMalloc(&o, m * sizeof(float));
    k<<<n, 64>>>(a, s, o, n, C, m);
}"""
    params = infer_binding(parse_source(src, "s.cu"), "k")[0]["params"]
    assert "range" not in params["idx"], params["idx"]


@pytest.mark.parametrize(
    ("extent", "row", "want"),
    [
        ("(R) * (C)", "C", "R"),
        ("C*R", "C", "R"),
        ("64 * (D)", "D", 64),
        (192, 3, 64),
        (100, 3, None),
        ("a + b * C", "C", None),
        ("(n) * (C) * (K)", "C * K", "n"),
        ("n", "C", None),
    ],
)
def test_row_counts_divide_only_as_written(extent, row, want) -> None:  # noqa: ANN001
    assert row_count(extent, row) == want


#: twelve bins the host allocates, picked by pointer arithmetic: the check's CUDA run draws the
#: bins from [0, 12) and reports no out-of-bounds atomic
SMALL_BINS = """
#define BINS 12
__global__ void tally(float* mass, const float* w, const int* key, int n) {
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j >= n) return;
    atomicAdd(mass + key[j], w[j]);
}
void tally_host(const float* w, const int* key, int n) {
    float* mass;
    cudaMalloc(&mass, BINS * sizeof(float));
    tally<<<(n + 127) / 128, 128>>>(mass, w, key, n);
}
"""


def test_check_draws_scatter_indices_inside_the_target(tmp_path) -> None:  # noqa: ANN001
    from cuda2nki import api

    cu = tmp_path / "tally.cu"
    cu.write_text(SMALL_BINS)
    result = api.port(cu)
    assert result.source is not None
    py = tmp_path / "tally_port.py"
    py.write_text(result.source)
    report = api.check(cu, py, seeds=1)
    assert not [f for f in report.findings if f.code == "C2N1500"], report.findings
    assert report.numerics_outcome == "pass"


#: arrays read at a bare loaded value and bounded by data-free accesses elsewhere: kernel ->
#: (array, its shape, index input, its range)
TIED = {
    "csr-row-plus-own-value": (
        """
__global__ void k(const int* start, const int* nbr, const float* h, float* out, int nodes) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < nodes) {
        float acc = h[v];
        for (int e = start[v]; e < start[v + 1]; ++e) acc += 0.5f * h[nbr[e]];
        out[v] = acc;
    }
}
void go(const int* s, const int* n, const float* h, float* o, int nodes) {
    k<<<(nodes + 127) / 128, 128>>>(s, n, h, o, nodes);
}""",
        ("h", ["nodes"], "nbr", [0, "nodes"]),
    ),
    "csr-in-place-through-a-local": (
        """
__global__ void k(const int* rp, const int* ci, float* x, int m) {
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < m; r += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int j = rp[r]; j < rp[r + 1]; j++) { int c = ci[j]; s += x[c]; }
        x[r] = 0.5f * s;
    }
}
void go(const int* p, const int* c, float* x, int m) { k<<<32, 64>>>(p, c, x, m); }""",
        ("x", ["m"], "ci", [0, "m"]),
    ),
}


@pytest.mark.parametrize("spelling", sorted(TIED))
def test_data_free_accesses_bound_an_array_its_data_reach(spelling: str) -> None:
    src, (array, shape, data, rng) = TIED[spelling]
    params = _params(src)
    assert params[array].get("shape") == shape, params[array]
    assert params[data].get("range") == rng, params[data]


@pytest.mark.parametrize(
    "use",
    [
        "s += x[ci[j] - 1];",  # below the data: values from 0 reach below the array
        "s += x[ci[j] + j];",  # more than the bare value
    ],
)
def test_offsets_beyond_the_bare_value_leave_the_array_unsized(use: str) -> None:
    src = f"""
__global__ void k(const int* rp, const int* ci, const float* x, float* y, int m) {{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m) {{
        float s = x[r];
        for (int j = rp[r]; j < rp[r + 1]; j++) {use}
        y[r] = s;
    }}
}}
void go(const int* p, const int* c, const float* x, float* y, int m) {{
    k<<<(m + 127) / 128, 128>>>(p, c, x, y, m);
}}"""
    params = infer_binding(parse_source(src, "s.cu"), "k")[0]["params"]
    assert "shape" not in params["x"], params["x"]
    assert params["ci"].get("range") != [0, "m"], params["ci"]
