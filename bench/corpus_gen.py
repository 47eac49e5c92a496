"""Synthetic CUDA corpora for load tests: variants of the idioms the corpus covers.

Each variant changes what real code bases change -- parameter and index names, index order,
guard style (``if (i < n)``, early return, grid-stride loop), block size, the elementwise
operation, 1-D vs 2-D grids -- and comes with a sidecar binding.  ``broken`` files (syntax errors,
refused constructs) are mixed in at a fixed rate.  Deterministic for a given seed.
"""

from __future__ import annotations

import random
from pathlib import Path

NAMES = [
    ("out", "a", "b", "n"),
    ("y", "x", "z", "N"),
    ("dst", "src0", "src1", "count"),
    ("C", "A", "B", "len"),
]
IDX = ["i", "idx", "tid", "gid", "k"]
OPS = [
    "{a} + {b}",
    "{a} * {b}",
    "{a} - {b}",
    "fmaxf({a}, {b})",
    "{a} * 0.5f + {b}",
    "{a} * {b} + 1.0f",
]
BLOCKS = [64, 128, 256, 512, 1024]


def _index(rng: random.Random, i: str) -> str:
    return rng.choice(
        [
            f"int {i} = blockIdx.x * blockDim.x + threadIdx.x;",
            f"int {i} = threadIdx.x + blockIdx.x * blockDim.x;",
            f"const int {i} = blockDim.x * blockIdx.x + threadIdx.x;",
            f"unsigned int {i} = blockIdx.x * blockDim.x + threadIdx.x;",
        ]
    )


def elementwise(rng: random.Random, name: str) -> tuple[str, str]:
    o, a, b, n = rng.choice(NAMES)
    i = rng.choice(IDX)
    bs = rng.choice(BLOCKS)
    expr = rng.choice(OPS).format(a=f"{a}[{i}]", b=f"{b}[{i}]")
    style = rng.randrange(3)
    if style == 0:
        body = f"    {_index(rng, i)}\n    if ({i} < {n}) {{\n        {o}[{i}] = {expr};\n    }}\n"
    elif style == 1:
        body = f"    {_index(rng, i)}\n    if ({i} >= {n}) return;\n    {o}[{i}] = {expr};\n"
    else:
        body = (
            f"    for (int {i} = blockIdx.x * blockDim.x + threadIdx.x; {i} < {n}; {i} += blockDim.x * gridDim.x) {{\n"
            f"        {o}[{i}] = {expr};\n    }}\n"
        )
    cu = (
        f"__global__ void {name}(float* {o}, const float* {a}, const float* {b}, int {n}) {{\n{body}}}\n\n"
        f"void launch_{name}(float* {o}, const float* {a}, const float* {b}, int {n}) {{\n"
        f"    {name}<<<({n} + {bs - 1}) / {bs}, {bs}>>>({o}, {a}, {b}, {n});\n}}\n"
    )
    toml = (
        f'kernel = "{name}"\nidiom = "map"\n[launch]\ngrid = ["ceil_div({n}, {bs})"]\nblock = [{bs}]\n[params]\n'
        f'{o} = {{ shape = ["{n}"], dtype = "float32", role = "out" }}\n'
        f'{a} = {{ shape = ["{n}"], dtype = "float32", role = "in" }}\n'
        f'{b} = {{ shape = ["{n}"], dtype = "float32", role = "in" }}\n'
        f"{n} = {rng.choice([1000, 4096, 777, 129])}\n"
    )
    return cu, toml


def row_sum(rng: random.Random, name: str) -> tuple[str, str]:
    bs = rng.choice([64, 128, 256])
    s, t = rng.choice([("sdata", "tid"), ("smem", "t"), ("buf", "lane")])
    cu = f"""__global__ void {name}(float* out, const float* in, int rows, int cols) {{
    __shared__ float {s}[{bs}];
    int row = blockIdx.x;
    int {t} = threadIdx.x;
    float acc = 0.0f;
    for (int c = {t}; c < cols; c += blockDim.x) acc += in[row * cols + c];
    {s}[{t}] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {{
        if ({t} < stride) {s}[{t}] += {s}[{t} + stride];
        __syncthreads();
    }}
    if ({t} == 0) out[row] = {s}[0];
}}
"""
    toml = (
        f'kernel = "{name}"\nidiom = "reduce"\n[launch]\ngrid = ["rows"]\nblock = [{bs}]\n[params]\n'
        'out = { shape = ["rows"], dtype = "float32", role = "out" }\n'
        'in = { shape = ["rows", "cols"], dtype = "float32", role = "in" }\n'
        f"rows = {rng.choice([64, 100, 129])}\ncols = {rng.choice([256, 300, 512])}\n"
    )
    return cu, toml


def matmul(rng: random.Random, name: str) -> tuple[str, str]:
    r, c = rng.choice([("row", "col"), ("i", "j"), ("m", "n")])
    bx = rng.choice([8, 16, 32])
    cu = f"""__global__ void {name}(const float* A, const float* B, float* C, int M, int N, int K) {{
    int {r} = blockIdx.y * blockDim.y + threadIdx.y;
    int {c} = blockIdx.x * blockDim.x + threadIdx.x;
    if ({r} < M && {c} < N) {{
        float sum = 0.0f;
        for (int kk = 0; kk < K; ++kk) sum += A[{r} * K + kk] * B[kk * N + {c}];
        C[{r} * N + {c}] = sum;
    }}
}}
"""
    toml = (
        f'kernel = "{name}"\nidiom = "contract"\n[launch]\ngrid = ["ceil_div(N, {bx})", "ceil_div(M, {bx})"]\n'
        f"block = [{bx}, {bx}]\n[params]\n"
        'A = { shape = ["M", "K"], dtype = "float32", role = "in" }\n'
        'B = { shape = ["K", "N"], dtype = "float32", role = "in" }\n'
        'C = { shape = ["M", "N"], dtype = "float32", role = "out" }\n'
        f"M = {rng.choice([64, 100])}\nN = {rng.choice([64, 130])}\nK = {rng.choice([96, 200])}\n"
    )
    return cu, toml


BROKEN = [
    "__global__ void {name}(float* x, int n) {{ int i = threadIdx.x; if (i < n) x[i] = ; }}\n",
    '__global__ void {name}(float* x) {{ asm volatile("membar.gl;"); x[threadIdx.x] = 0.0f; }}\n',
    "__device__ float f_{name}(float v, int d) {{ return d == 0 ? v : f_{name}(v * 2.0f, d - 1); }}\n"
    "__global__ void {name}(float* x) {{ x[threadIdx.x] = f_{name}(x[threadIdx.x], 3); }}\n",
]

GENERATORS = (elementwise, elementwise, elementwise, row_sum, matmul)


def generate(
    root: Path,
    count: int,
    *,
    seed: int = 0,
    broken_every: int = 25,
    per_dir: int = 200,
    kinds: tuple[str, ...] | None = None,
) -> int:
    """Write ``count`` kernels (one per file) under ``root``; returns the number of broken files.

    ``kinds`` restricts the generators by name (e.g. ``("elementwise", "matmul")``: the shared
    memory reductions are the slowest kernels to lift); by default the mix of ``GENERATORS``.
    """
    rng = random.Random(seed)
    gens = GENERATORS if kinds is None else tuple(g for g in GENERATORS if g.__name__ in kinds)
    if not gens:
        raise ValueError(f"no generator named in {kinds}")
    broken = 0
    for k in range(count):
        d = root / f"part{k // per_dir:03d}"
        d.mkdir(parents=True, exist_ok=True)
        name = f"k{k:05d}_{rng.choice(['scale', 'fused', 'op', 'kern'])}"
        if broken_every and k % broken_every == broken_every - 1:
            (d / f"{name}.cu").write_text(rng.choice(BROKEN).format(name=name))
            broken += 1
            continue
        cu, toml = rng.choice(gens)(rng, name)
        (d / f"{name}.cu").write_text(cu)
        (d / f"{name}.toml").write_text(toml)
    return broken
