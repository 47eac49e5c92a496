"""Catalogue of the hand-written NKI test kernels: inputs, NumPy references, shapes, tolerances.

Each kernel exists twice, ``current/<stem>.py`` (``nki`` API) and ``legacy/<stem>.py``
(``neuronxcc.nki`` beta-1 API), with the same function name and parameters. References are computed
in float64 from the exact (already rounded) input values and compared with per-dtype tolerances.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent
BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)

Inputs = dict[str, object]


@dataclass(frozen=True)
class Tol:
    rtol: float
    atol: float


FP32 = Tol(1e-5, 1e-6)
FP32_SUM = Tol(1e-5, 1e-4)
FP32_MM = Tol(1e-4, 1e-4)
BF16_OUT = Tol(1e-2, 1e-2)


@dataclass(frozen=True)
class Case:
    stem: str
    func: str
    make: Callable[[np.random.Generator, tuple], Inputs]
    ref: Callable[[Inputs], list[np.ndarray]]
    shapes: tuple[tuple, ...]
    tol: Tol = FP32
    legacy_shapes: tuple[tuple, ...] | None = None  # None: same as ``shapes``
    notes: str = field(default="", compare=False)

    def path(self, api: str) -> Path:
        return HERE / api / f"{self.stem}.py"

    def shapes_for(self, api: str) -> tuple[tuple, ...]:
        if api == "legacy" and self.legacy_shapes is not None:
            return self.legacy_shapes
        return self.shapes


def f64(x: object) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def normal(rng: np.random.Generator, shape: tuple, dtype: np.dtype = F32) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


# ---------------------------------------------------------------------------------- references
def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def ref_add(i: Inputs) -> list[np.ndarray]:
    return [f64(i["a"]) + f64(i["b"])]


def ref_matmul_lhsT(i: Inputs) -> list[np.ndarray]:
    return [f64(i["lhsT"]).T @ f64(i["rhs"])]


def ref_matmul(i: Inputs) -> list[np.ndarray]:
    return [f64(i["a"]) @ f64(i["b"])]


def ref_transpose(i: Inputs) -> list[np.ndarray]:
    return [f64(i["x"]).T]


def ref_softmax(i: Inputs) -> list[np.ndarray]:
    x = f64(i["x"])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return [e / e.sum(axis=1, keepdims=True)]


def ref_layernorm(i: Inputs) -> list[np.ndarray]:
    x = f64(i["x"])
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return [(x - mu) / np.sqrt(var + float(i["eps"])) * f64(i["gamma"]) + f64(i["beta"])]


def ref_rmsnorm(i: Inputs) -> list[np.ndarray]:
    x = f64(i["x"])
    return [x / np.sqrt((x * x).mean(axis=1, keepdims=True) + float(i["eps"])) * f64(i["g"])]


def ref_avgpool(i: Inputs) -> list[np.ndarray]:
    x, k = f64(i["x"]), int(i["pool"])
    c, h, w = x.shape
    ho, wo = h // k, w // k
    win = x[:, : ho * k, : wo * k].reshape(c, ho, k, wo, k)
    return [win.mean(axis=(2, 4))]


def ref_gelu(i: Inputs) -> list[np.ndarray]:
    x = f64(i["x"])
    return [0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))]


def ref_silu_mul(i: Inputs) -> list[np.ndarray]:
    g = f64(i["gate"])
    return [g / (1.0 + np.exp(-g)) * f64(i["up"])]


def ref_total_sum(i: Inputs) -> list[np.ndarray]:
    return [np.array([[f64(i["x"]).sum()]])]


def ref_column_sum(i: Inputs) -> list[np.ndarray]:
    return [f64(i["x"]).sum(axis=0, keepdims=True)]


def ref_attention_scores(i: Inputs) -> list[np.ndarray]:
    return [f64(i["q"]).T @ f64(i["k"]) * float(i["scale"])]


def ref_linear_scan(i: Inputs) -> list[np.ndarray]:
    a, b = f64(i["a"]), f64(i["b"])
    h = np.empty_like(a)
    carry = np.zeros(a.shape[0])
    for t in range(a.shape[1]):
        carry = a[:, t] * carry + b[:, t]
        h[:, t] = carry
    return [h]


def ref_saxpy(i: Inputs) -> list[np.ndarray]:
    return [float(i["alpha"]) * f64(i["x"]) + f64(i["y"])]


def ref_embedding(i: Inputs) -> list[np.ndarray]:
    return [f64(i["table"])[np.asarray(i["ids"])]]


# ---------------------------------------------------------------------------------- input makers
def mk_add(rng, s):
    m, n, *dt = s
    d = np.dtype(dt[0]) if dt else np.dtype(np.float32)
    return {"a": normal(rng, (m, n), d), "b": normal(rng, (m, n), d)}


def mk_matmul_lhsT(rng, s):
    k, m, n, *dt = s
    d = np.dtype(dt[0]) if dt else np.dtype(np.float32)
    return {"lhsT": normal(rng, (k, m), d), "rhs": normal(rng, (k, n), d)}


def mk_matmul_bf16(rng, s):
    m, k, n = s
    return {"a": normal(rng, (m, k), BF16), "b": normal(rng, (k, n), BF16)}


def mk_x(rng, s):
    return {"x": normal(rng, s)}


def mk_layernorm(rng, s):
    m, n = s
    return {
        "x": normal(rng, (m, n)) * np.float32(3.0) + np.float32(1.5),
        "gamma": normal(rng, (n,)),
        "beta": normal(rng, (n,)),
        "eps": 1e-5,
    }


def mk_rmsnorm(rng, s):
    m, n = s
    return {"x": normal(rng, (m, n)), "g": normal(rng, (n,)), "eps": 1e-6}


def mk_avgpool(rng, s):
    c, h, w, k = s
    return {"x": normal(rng, (c, h, w)), "pool": k}


def mk_silu_mul(rng, s):
    return {"gate": normal(rng, s), "up": normal(rng, s)}


def mk_attention(rng, s):
    d, sq, sk = s
    return {"q": normal(rng, (d, sq)), "k": normal(rng, (d, sk)), "scale": 1.0 / math.sqrt(d)}


def mk_scan(rng, s):
    return {
        "a": rng.uniform(0.5, 1.0, s).astype(np.float32),
        "b": normal(rng, s),
    }


def mk_saxpy(rng, s):
    (n,) = s
    return {"x": normal(rng, (n,)), "y": normal(rng, (n,)), "alpha": 0.75}


def mk_embedding(rng, s):
    v, d, t = s
    return {
        "table": normal(rng, (v, d)),
        "ids": rng.integers(0, v, size=(t,)).astype(np.int32),
    }


CASES: tuple[Case, ...] = (
    Case("tensor_add", "tensor_add_kernel", mk_add, ref_add, ((256, 1024), (300, 700))),
    Case(
        "tensor_add",
        "tensor_add_kernel",
        mk_add,
        ref_add,
        ((130, 600, "bfloat16"),),
        BF16_OUT,
        notes="bf16",
    ),
    Case(
        "matmul_tiled",
        "matmul_tiled_kernel",
        mk_matmul_lhsT,
        ref_matmul_lhsT,
        ((256, 128, 512), (384, 200, 700), (300, 130, 520)),
        FP32_MM,
        legacy_shapes=((256, 128, 512), (384, 200, 700)),
    ),
    Case("transpose2d", "transpose2d_kernel", mk_x, ref_transpose, ((256, 384), (200, 130))),
    Case("softmax", "softmax_kernel", mk_x, ref_softmax, ((128, 256), (300, 1000))),
    Case(
        "layernorm",
        "layernorm_kernel",
        mk_layernorm,
        ref_layernorm,
        ((128, 512), (200, 1000)),
        Tol(1e-4, 1e-4),
    ),
    Case(
        "rmsnorm",
        "rmsnorm_kernel",
        mk_rmsnorm,
        ref_rmsnorm,
        ((128, 512), (130, 300)),
        Tol(1e-5, 1e-5),
    ),
    Case(
        "avgpool2d",
        "avgpool2d_kernel",
        mk_avgpool,
        ref_avgpool,
        ((128, 8, 8, 2), (130, 7, 9, 2), (3, 6, 6, 3)),
    ),
    Case("gelu", "gelu_kernel", mk_x, ref_gelu, ((128, 512), (200, 2100))),
    Case("silu_mul", "silu_mul_kernel", mk_silu_mul, ref_silu_mul, ((128, 1024), (131, 1500))),
    Case("total_sum", "total_sum_kernel", mk_x, ref_total_sum, ((128, 64), (300, 257)), FP32_SUM),
    Case(
        "column_sum", "column_sum_kernel", mk_x, ref_column_sum, ((256, 512), (300, 700)), FP32_SUM
    ),
    Case(
        "attention_scores",
        "attention_scores_kernel",
        mk_attention,
        ref_attention_scores,
        ((64, 128, 512), (96, 200, 700)),
        FP32_MM,
    ),
    Case(
        "linear_scan",
        "linear_scan_kernel",
        mk_scan,
        ref_linear_scan,
        ((128, 512), (130, 1000)),
        Tol(1e-4, 1e-4),
        legacy_shapes=((128, 512), (130, 1024), (5, 300)),
    ),
    Case("saxpy_1d", "saxpy_kernel", mk_saxpy, ref_saxpy, ((12800,), (300001,), (77,))),
    Case(
        "embedding_gather",
        "embedding_gather_kernel",
        mk_embedding,
        ref_embedding,
        ((500, 64, 128), (1000, 96, 300)),
    ),
    Case(
        "matmul_bf16",
        "matmul_bf16_kernel",
        mk_matmul_bf16,
        ref_matmul,
        ((128, 256, 512), (200, 384, 600), (130, 300, 520)),
        Tol(1e-4, 1e-3),
        legacy_shapes=((128, 256, 512), (200, 384, 600)),
    ),
)


def case_id(case: Case, shape: tuple) -> str:
    return f"{case.stem}-" + "x".join(str(d) for d in shape)


def params(api: str) -> list[tuple[Case, tuple]]:
    return [(c, s) for c in CASES for s in c.shapes_for(api)]


def split_outputs(outputs: object) -> list[np.ndarray]:
    """The kernel's returned outputs as a list (one array, a tuple/list, or a name->array dict)."""
    if isinstance(outputs, dict):
        return [np.asarray(v) for v in outputs.values()]
    if isinstance(outputs, (tuple, list)):
        return [np.asarray(v) for v in outputs]
    return [np.asarray(outputs)]


def assert_close(got: np.ndarray, want: np.ndarray, tol: Tol, what: str) -> None:
    got64 = np.asarray(got).astype(np.float64)
    assert got64.shape == want.shape, f"{what}: shape {got64.shape} != {want.shape}"
    bad = ~np.isclose(got64, want, rtol=tol.rtol, atol=tol.atol)
    if bad.any():
        idx = tuple(int(v[0]) for v in np.nonzero(bad))
        err = float(np.nanmax(np.abs(got64 - want)))
        raise AssertionError(
            f"{what}: {int(bad.sum())}/{bad.size} elements outside rtol={tol.rtol} atol={tol.atol}; "
            f"first at {idx}: got {got64[idx]!r}, want {want[idx]!r}; max abs err {err:.3g}"
        )


# ---------------------------------------------------------------------------------- running
_LOADED: dict[tuple[str, str], object] = {}


def kernel(api: str, stem: str, func: str) -> object:
    """The kernel function loaded through the simulator's importer (cached per file)."""
    from cuda2nki.nkisim import load_kernel

    key = (api, stem)
    if key not in _LOADED:
        _LOADED[key] = load_kernel(str(HERE / api / f"{stem}.py"), func)
    return _LOADED[key]


def simulate(api: str, case: Case, inputs: Inputs, **kw: object) -> object:
    from cuda2nki.nkisim import simulate_kernel

    return simulate_kernel(kernel(api, case.stem, case.func), inputs, **kw)


def check_case(api: str, case: Case, shape: tuple, seed: int = 0) -> None:
    inputs = case.make(np.random.default_rng(seed), shape)
    res = simulate(api, case, inputs)
    got = split_outputs(res.outputs)
    want = case.ref(inputs)
    assert len(got) == len(want), f"{len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, case.tol, f"{api}/{case_id(case, shape)} output {k}")


def by_stem(stem: str) -> Case:
    return next(c for c in CASES if c.stem == stem)


def trace_figures(res: object) -> tuple[dict[str, int], int, int]:
    """(instructions per engine, DMA count, DMA bytes) from a simulation's instruction trace."""
    per_engine: dict[str, int] = {}
    dma_bytes = 0
    for ins in res.trace:
        per_engine[ins.engine] = per_engine.get(ins.engine, 0) + 1
        if ins.engine == "dma":
            dma_bytes += ins.dma_bytes
    return per_engine, per_engine.get("dma", 0), dma_bytes


def run_for_figures(api: str, stem: str, shape: tuple) -> tuple[dict[str, int], int, int]:
    case = by_stem(stem)
    inputs = case.make(np.random.default_rng(0), shape)
    res = simulate(api, case, inputs, profile=True)
    return trace_figures(res)
