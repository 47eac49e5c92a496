"""Pointers indexed by loaded data (:mod:`cuda2nki.lift.dataindex`): CSR rows, gathers through
an index array, records of first-entry and count, hash tables masked or reduced to a capacity.

The data inputs take values the binding chooses (``range = [0, 64)``) and each array indexed
through them the extent those values reach; a table indexed by a masked or reduced hash is as
large as its capacity, with no range needed.  Scatters, offsets below the data, and data the
kernel writes stay unsized."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.dataindex import DATA_VALUES
from cuda2nki.lift.infer import binding_from_inference, infer_binding

V = DATA_VALUES

#: kernel source -> (pointer -> expected shape, data input -> expected range)
SIZED = {
    "csr-row-loop": (
        """
__global__ void k(const int* rp, const int* ci, const float* a, const float* x, float* y, int m) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m) {
        float s = 0.0f;
        for (int j = rp[r]; j < rp[r + 1]; j++) s += a[j] * x[ci[j]];
        y[r] = s;
    }
}
void go(const int* p, const int* c, const float* a, const float* x, float* y, int m) {
    k<<<(m + 127) / 128, 128>>>(p, c, a, x, y, m);
}""",
        {"ci": [V - 1], "a": [V - 1], "x": [V]},
        {"rp": [0, V], "ci": [0, V]},
    ),
    "csr-grid-stride-capped": (
        """
__global__ void k(const int* first, const int* col, const float* val, const float* vec,
                  float* out, int rows, int width) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < rows;
         row += blockDim.x * gridDim.x) {
        int b = first[row], e = first[row + 1];
        float acc = 0.0f;
        for (int t = 0; t < width; ++t) {
            int q = b + t;
            if (q < e) acc += val[q] * vec[col[q]];
        }
        out[row] = acc;
    }
}
void go(const int* f, const int* c, const float* v, const float* x, float* o, int n, int w) {
    k<<<(n + 255) / 256, 256>>>(f, c, v, x, o, n, w);
}""",
        {"first": ["1+rows"], "col": [V - 1], "val": [V - 1]},
        {"first": [0, V], "col": [0, V]},
    ),
    "start-and-count-early-return": (
        """
__global__ void k(const int* start, const int* count, const float* w, float* sum, int nodes) {
    int v = threadIdx.x + blockDim.x * blockIdx.x;
    if (v >= nodes) return;
    float acc = 0.0f;
    for (int e = 0; e < count[v]; ++e) {
        if (e > 100000) break;
        acc += w[start[v] + e];
    }
    sum[v] = acc;
}
void go(const int* s, const int* c, const float* w, float* o, int n) {
    k<<<(n + 63) / 64, 64>>>(s, c, w, o, n);
}""",
        {"w": [2 * V - 2]},
        {"start": [0, V], "count": [0, V]},
    ),
    "rows-stride-first-in-a-break-loop": (
        """
__global__ void k(float* out, const int* ids, const float* table, int n, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int d = 0; d < D; d++) {
            if (ids[i] < 0) break;
            out[i * D + d] = table[d + D * ids[i]];
        }
    }
}
void go(float* o, const int* s, const float* t, int n, int D) {
    k<<<(n + 63) / 64, 64>>>(o, s, t, n, D);
}""",
        {"table": [V, "D"]},
        {"ids": [0, V]},
    ),
    "offset-past-the-row": (
        """
__global__ void k(float* out, const int* ids, const float* table, int n, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[ids[i] * D + i];
}
void go(float* o, const int* s, const float* t, int n, int D) { k<<<(n + 63) / 64, 64>>>(o, s, t, n, D); }""",
        {"table": [f"{V - 1}*D+n"]},
        {"ids": [0, V]},
    ),
}

#: hash tables: the slot is reduced to the capacity, so the table has its capacity
HASHED = {
    "mask-right-probe-loop": """
__global__ void k(const unsigned* keys, const unsigned* tk, const int* tv, int* out, int n, int cap) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = keys[i];
    unsigned slot = (h * 2654435761u) & (cap - 1);
    int got = -1;
    for (int t = 0; t < cap; t++) {
        if (tk[slot] == h) { got = tv[slot]; break; }
        slot = (slot + 1) & (cap - 1);
    }
    out[i] = got;
}
void go(const unsigned* a, const unsigned* b, const int* c, int* o, int n, int cap) {
    k<<<(n + 255) / 256, 256>>>(a, b, c, o, n, cap);
}""",
    "mask-left-no-loop": """
__global__ void k(const int* key, const float* tk, const float* tv, float* out, int n, int cap) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) {
        int s = (cap - 1) & (key[i] * 31 + 7);
        out[i] = tk[s] * tv[s];
    }
}
void go(const int* a, const float* b, const float* c, float* o, int n, int cap) {
    k<<<(n + 127) / 128, 128>>>(a, b, c, o, n, cap);
}""",
    "modulo-probe-while": """
__global__ void k(const int* q, const int* tk, const float* tv, float* out, int n, int cap) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = (q[i] * 7) % cap;
        int tries = 0;
        float r = 0.0f;
        while (tries < 8) {
            if (tk[s] == q[i]) { r = tv[s]; break; }
            s = (s + 1) % cap;
            tries++;
        }
        out[i] = r;
    }
}
void go(const int* a, const int* b, const float* c, float* o, int n, int cap) {
    k<<<(n + 127) / 128, 128>>>(a, b, c, o, n, cap);
}""",
}

#: data-indexed pointers no choice of values makes safe to size
UNSIZED = {
    "scatter-store": (
        """
__global__ void k(const int* ids, const float* v, const float* lut, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 4; j++) {
        if (ids[j] < 0) break;
        if (i < n) dst[ids[i]] = v[i] * lut[ids[i]];
    }
}
void go(const int* s, const float* v, const float* l, float* d, int n) {
    k<<<(n + 63) / 64, 64>>>(s, v, l, d, n);
}""",
        "dst",
        ("lut", [V]),
    ),
    "offset-below-the-data": (
        """
__global__ void k(const int* rp, const int* ci, const float* x, float* y, int m) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m) {
        float s = 0.0f;
        for (int j = rp[r]; j < rp[r + 1]; j++) s += x[ci[j] - 1];
        y[r] = s;
    }
}
void go(const int* p, const int* c, const float* x, float* y, int m) {
    k<<<(m + 127) / 128, 128>>>(p, c, x, y, m);
}""",
        "x",
        ("ci", [V - 1]),
    ),
    "index-data-the-kernel-writes": (
        """
__global__ void k(int* next, const int* pick, const float* x, const float* z, float* y, int m) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m) {
        float s = 0.0f;
        for (int j = 0; j < next[r]; j++) s += x[next[j]];
        next[r] = 0;
        y[r] = s + z[pick[r]];
    }
}
void go(int* p, const int* q, const float* x, const float* z, float* y, int m) {
    k<<<(m + 127) / 128, 128>>>(p, q, x, z, y, m);
}""",
        "x",
        ("z", [V]),
    ),
}


@pytest.mark.parametrize("spelling", sorted(SIZED))
def test_data_indexed_pointers_get_extents_and_their_data_a_range(spelling: str) -> None:
    src, shapes, ranges = SIZED[spelling]
    tu = parse_source(src, "g.cu")
    bnd, diags = binding_from_inference(tu, "k")
    assert bnd is not None, [d.message for d in diags]
    partial, _ = infer_binding(tu, "k")
    params = partial["params"]
    for name, want in shapes.items():
        assert params[name]["shape"] == want, (name, params[name])
    for name, want in ranges.items():
        assert params[name]["range"] == want, (name, params[name])


def test_the_binding_says_what_it_assumed() -> None:
    src, _, _ = SIZED["csr-row-loop"]
    _, diags = infer_binding(parse_source(src, "g.cu"), "k")
    texts = [d.message for d in diags if d.code == "C2N2100"]
    assert any("'a' shape [63]" in t and "values of 'rp'" in t for t in texts), texts
    assert any("'rp' values in [0, 64)" in t for t in texts), texts


@pytest.mark.parametrize("spelling", sorted(HASHED))
def test_a_hashed_table_has_its_capacity(spelling: str) -> None:
    tu = parse_source(HASHED[spelling], "h.cu")
    bnd, diags = binding_from_inference(tu, "k")
    assert bnd is not None, [d.message for d in diags]
    params = infer_binding(tu, "k")[0]["params"]
    tables = [n for n in params if n in ("tk", "tv")]
    assert tables and all(params[n]["shape"] == ["cap"] for n in tables), params
    assert all("range" not in params[n] for n in ("keys", "key", "q") if n in params), params


@pytest.mark.parametrize("spelling", sorted(UNSIZED))
def test_unsafe_data_indexed_pointers_stay_unsized(spelling: str) -> None:
    """The target stays unsized while a safe read beside it is sized by the same rule."""
    src, target, (other, shape) = UNSIZED[spelling]
    partial, _ = infer_binding(parse_source(src, "g.cu"), "k")
    assert "shape" not in partial["params"][target], partial["params"][target]
    assert partial["params"][other].get("shape") == shape, partial["params"][other]


@pytest.mark.parametrize("spelling", ["count-below", "locals-compared"])
def test_a_grid_stride_read_one_past_the_index_widens_the_extent(spelling: str) -> None:
    """``a[i + 1]`` read beside ``a[i]`` in a grid-stride loop, only to decide what to sum."""
    body = {
        "count-below": "float s = 0.0f; for (int t = 0; t < 4; t++) "
        "if (a[i] + t < a[i + 1]) s += 1.0f; d[i] = s;",
        "locals-compared": "int lo = a[i]; int hi = a[i + 1]; float s = 0.0f; "
        "for (int t = 0; t < 8; ++t) { if (lo + t < hi) s += 2.0f; } d[i] = s;",
    }[spelling]
    src = f"""
__global__ void k(const int* a, float* d, int n) {{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
        {body}
    }}
}}
void go(const int* a, float* d, int n) {{ k<<<(n + 127) / 128, 128>>>(a, d, n); }}"""
    partial, _ = infer_binding(parse_source(src, "g.cu"), "k")
    assert partial["params"]["a"]["shape"] == ["1+n"], partial["params"]["a"]


#: an input whose values index the kernel's one dynamic shared array
DYNAMIC_SHARED = {
    "int-histogram-atomic": """
__global__ void k(const int* bin_of, int* hist, int n, int nbins) {
    extern __shared__ int local_hist[];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) local_hist[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&local_hist[bin_of[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&hist[b], local_hist[b]);
}
void go(const int* x, int* h, int n, int nb) {
    k<<<(n + 255) / 256, 256, nb * sizeof(int)>>>(x, h, n, nb);
}""",
    "float-row-through-a-local": """
__global__ void k(const int* slot, const float* w, float* rows, int n, int width) {
    extern __shared__ float acc[];
    if (threadIdx.x < width) acc[threadIdx.x] = 0.0f;
    __syncthreads();
    for (int e = threadIdx.x; e < n; e += blockDim.x) {
        int c = slot[blockIdx.x * n + e];
        atomicAdd(&acc[c], w[blockIdx.x * n + e]);
    }
    __syncthreads();
    if (threadIdx.x < width) rows[blockIdx.x * width + threadIdx.x] = acc[threadIdx.x];
}
void go(const int* s, const float* w, float* r, int n, int width) {
    size_t bytes = sizeof(float) * width;
    k<<<8, 128, bytes>>>(s, w, r, n, width);
}""",
}


@pytest.mark.parametrize("spelling", sorted(DYNAMIC_SHARED))
def test_values_indexing_a_dynamic_shared_array_stay_below_its_count(spelling: str) -> None:
    from cuda2nki.binding import eval_c_expr

    partial, _ = infer_binding(parse_source(DYNAMIC_SHARED[spelling], "s.cu"), "k")
    params = partial["params"]
    data = "bin_of" if "bin_of" in params else "slot"
    size = "nbins" if "nbins" in params else "width"
    lo, hi = params[data]["range"]
    assert lo == 0 and eval_c_expr(str(hi), {size: 37}) == 37, params[data]


def test_a_guard_on_the_loaded_value_bounds_it_without_a_range() -> None:
    """``if (ids[j] < n)`` bounds the value itself: the array read through it is ``[n]`` and
    the index data keeps no assumed range, while the other read through data takes one."""
    src = """
__global__ void k(const int* rp, const int* ids, const float* x, const float* w, float* y, int n) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n) {
        float s = 0.0f;
        for (int j = rp[r]; j < rp[r + 1]; j++)
            if (ids[j] < n) s += x[ids[j]] * w[j];
        y[r] = s;
    }
}
void go(const int* p, const int* c, const float* x, const float* w, float* y, int n) {
    k<<<(n + 127) / 128, 128>>>(p, c, x, w, y, n);
}"""
    params = infer_binding(parse_source(src, "g.cu"), "k")[0]["params"]
    assert params["w"]["shape"] == [V - 1] and params["rp"]["range"] == [0, V], params
    assert params["x"]["shape"] == ["n"], params["x"]
