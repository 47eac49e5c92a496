"""Run kernels of the public NKI library (current ``nki`` API) on the simulator against NumPy.

Not a benchmark of speed and not a test: the library is not part of this project.  The library
ships no NumPy goldens (its references are torch code driven by its own harness), so each case
here is a call of one library kernel on inputs built here and a golden written here in NumPy from
the kernel's documented contract::

    python -m bench.public_nki_library --library PATH/TO/nki-library.git [--rev REV] [-v]

Each case runs in a child process with ``nki`` bound to the simulator and is counted with the
outcomes of :mod:`bench.public_nki` (matched, mismatch, refused, violation, crash, dependency,
timeout).
Modules that import scipy or torch need them on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.public_nki import COLUMNS, MARK, _export, classify


@dataclass(frozen=True)
class Case:
    name: str
    module: str  # nkilib.<...>
    kernel: str
    build: Callable[[np.random.Generator], tuple[dict, list[np.ndarray]]]  # inputs, goldens
    grid: int | None = None
    launch: str = "simulate"  # or "host": kernel[grid](**inputs) returns NumPy outputs


def _cumsum(shape):
    def build(rng):
        x = rng.standard_normal(shape).astype(np.float32)
        return {"x": x}, [np.cumsum(x, axis=-1)]

    return build


def _cascaded_max(shape):
    def build(rng):
        x = rng.standard_normal(shape).astype(np.float32)
        return {"input_tensor": x}, [x.max(-1, keepdims=True), x.argmax(-1)[..., None]]

    return build


def _rope(d, b, h, s):
    def build(rng):
        x = rng.standard_normal((d, b, h, s)).astype(np.float32)
        ang = (rng.random((d // 2, b, s)) * 3).astype(np.float32)
        cos, sin = np.cos(ang), np.sin(ang)
        x1, x2 = x[: d // 2], x[d // 2 :]
        c, sn = cos[:, :, None, :], sin[:, :, None, :]
        return {"x_in": x, "cos": cos, "sin": sin}, [
            np.concatenate([x1 * c - x2 * sn, x2 * c + x1 * sn], 0)
        ]

    return build


def _rope_hf(b, hq, hk, s, d, *, batched=False, cache=False, backward=False):
    """HuggingFace RoPE on [B, H, S, D]: ``x * cos + rotate_half(x) * sin`` with
    ``rotate_half(x) = [-x2, x1]``; backward (the gradient with respect to the input) applies
    the transpose of that linear map: ``g * cos + rotate_half_t(g * sin)``, where
    ``rotate_half_t(y) = [y2, -y1]``."""

    def rot(x):
        h = x.shape[-1] // 2
        return np.concatenate([-x[..., h:], x[..., :h]], -1)

    def rot_t(x):
        h = x.shape[-1] // 2
        return np.concatenate([x[..., h:], -x[..., :h]], -1)

    def build(rng):
        q = rng.standard_normal((b, hq, s, d)).astype(np.float32)
        k = rng.standard_normal((b, hk, s, d)).astype(np.float32)
        ang = rng.random(((b,) if batched else ()) + (s, d // 2)) * 3
        cos = np.cos(np.concatenate([ang, ang], -1)).astype(np.float32)
        sin = np.sin(np.concatenate([ang, ang], -1)).astype(np.float32)
        cb, sb = (cos[:, None], sin[:, None]) if batched else (cos, sin)
        if backward:
            refs = [x * cb + rot_t(x * sb) for x in (q, k)]
        else:
            refs = [x * cb + rot(x) * sb for x in (q, k)]
        args = {"q": q, "k": k, "q_out": np.zeros_like(q), "k_out": np.zeros_like(k)}
        if cache:
            args["rope_cache"] = np.concatenate([cos, sin], -1)
        else:
            args |= {"cos": cos, "sin": sin}
        return args | {"backward": backward}, refs

    return build


def _lse(logits):
    m = logits.max(1, keepdims=True)
    return np.log(np.exp(logits - m).sum(1)) + m[:, 0]


def _ce_forward(n, v):
    def build(rng):
        lg = rng.standard_normal((n, v)).astype(np.float32)
        tg = rng.integers(0, v, n).astype(np.int32)
        lse = _lse(lg)
        args = {"logits_hbm": lg, "targets_hbm": tg, "chunk_size": 512, "dtype": np.float32}
        return args, [lse - lg[np.arange(n), tg], lse]

    return build


def _ce_backward(n, v):
    def build(rng):
        lg = rng.standard_normal((n, v)).astype(np.float32)
        tg = rng.integers(0, v, n).astype(np.int32)
        lse = _lse(lg).astype(np.float32)
        grad = np.exp(lg - lse[:, None])
        grad[np.arange(n), tg] -= 1
        args = {
            "logits_hbm": lg,
            "targets_hbm": tg,
            "lse_state_hbm": lse,
            "chunk_size": 512,
            "dtype": np.float32,
            "inplace": False,
        }
        return args, [grad / n]

    return build


def _nonzero(t, c):
    def build(rng):
        x = ((rng.random((t, c)) < 0.3) * rng.random((t, c))).astype(np.float32)
        idx = np.full((c, t), -1, np.int32)
        cnt = np.zeros(c, np.int32)
        for j in range(c):
            nz = np.flatnonzero(x[:, j])
            idx[j, : nz.size] = nz
            cnt[j] = nz.size
        return {"input_tensor": x}, [idx, cnt]

    return build


def _conv1d(b, ci, co, n, k, stride, pad, dil, bias):
    def build(rng):
        x = rng.standard_normal((b, ci, n)).astype(np.float32)
        w = (rng.standard_normal((k, ci, co)) * 0.1).astype(np.float32)
        bb = rng.standard_normal(co).astype(np.float32)
        xp = np.pad(x, ((0, 0), (0, 0), pad))
        lo = (n + sum(pad) - dil * (k - 1) - 1) // stride + 1
        ref = np.zeros((b, co, lo), np.float32)
        for i in range(k):
            seg = xp[:, :, i * dil : i * dil + stride * (lo - 1) + 1 : stride]
            ref += np.einsum("bcl,co->bol", seg, w[i])
        args = {"x_in": x, "filters": w, "stride": stride, "padding": pad, "dilation": dil}
        if bias:
            args["bias"] = bb
            ref += bb[None, :, None]
        return args, [ref]

    return build


def _depthwise_conv1d(n, c, w, k, pad, stride):
    """``out[n, c, 0, q] = sum_s x_padded[n, c, 0, q * stride + s] * f[c, 0, 0, s]`` (a
    cross-correlation per channel, zero padding)."""

    def build(rng):
        x = rng.standard_normal((n, c, 1, w)).astype(np.float32)
        f = (rng.standard_normal((c, 1, 1, k)) * 0.3).astype(np.float32)
        xp = np.pad(x, ((0, 0), (0, 0), (0, 0), pad))
        q = (w + sum(pad) - k) // stride + 1
        ref = np.zeros((n, c, 1, q), np.float32)
        for s in range(k):
            ref += xp[..., s : s + stride * (q - 1) + 1 : stride] * f[None, :, 0, 0, s, None, None]
        args = {"img_ref": x, "filter_ref": f, "padding": ((0, 0), pad), "stride": (1, stride)}
        args["feature_group_count"] = c  # depthwise: one group per channel
        return args, [ref]

    return build


def _dynamic_add(m, h, tiles):
    def build(rng):
        a = rng.random((m, h)).astype(np.float32)
        b = rng.random((m, h)).astype(np.float32)
        rows = tiles * 128
        # rows past the runtime tile count are not written: the golden covers the written ones
        return {"input_a": a, "input_b": b, "num_m_tiles": np.array([[tiles]], np.int32)}, [
            (a + b)[:rows]
        ]

    return build


def _topk(b, s, v, k):
    def build(rng):
        x = rng.standard_normal((b, s, v)).astype(np.float32)
        top = -np.sort(-x, axis=-1)[..., :k]
        return {"inp": x, "k": k}, [top, top]  # indices are checked through the values

    return build


CASES = [
    *(
        Case(f"cumsum{s}", "nkilib.core.cumsum.cumsum", "cumsum", _cumsum(s))
        for s in [(1, 256), (128, 2048), (4, 3, 1024)]
    ),
    Case(
        "cascaded_max(1,1,4096)",
        "nkilib.core.max.cascaded_max",
        "cascaded_max",
        _cascaded_max((1, 1, 4096)),
    ),
    Case(
        "cascaded_max(2,2,8192)",
        "nkilib.core.max.cascaded_max",
        "cascaded_max",
        _cascaded_max((2, 2, 8192)),
        grid=2,
    ),
    Case("RoPE(64,1,2,128)", "nkilib.core.embeddings.rope", "RoPE", _rope(64, 1, 2, 128)),
    *(
        Case(
            f"rope_hf{p}{''.join(f' {k}' for k, v in kw.items() if v)}",
            "nkilib.core.embeddings.rope_hf",
            "rope_hf",
            _rope_hf(*p, **kw),
            grid=g,
        )
        for p, g, kw in [
            ((1, 2, 1, 128, 64), None, {}),
            ((2, 4, 2, 256, 128), 2, {"batched": True}),
            ((1, 2, 2, 128, 64), None, {"cache": True}),
            ((1, 2, 1, 256, 64), 2, {"backward": True}),
        ]
    ),
    Case(
        "cross_entropy_forward",
        "nkilib.experimental.loss.cross_entropy",
        "cross_entropy_forward",
        _ce_forward(64, 1024),
    ),
    Case(
        "cross_entropy_backward",
        "nkilib.experimental.loss.cross_entropy",
        "cross_entropy_backward",
        _ce_backward(64, 1024),
    ),
    *(
        Case(
            f"find_nonzero_indices{t}x{c}",
            "nkilib.core.subkernels.find_nonzero_indices",
            "find_nonzero_indices",
            _nonzero(t, c),
            grid=2,
        )
        for t, c in [(256, 16), (1024, 8)]
    ),
    *(
        Case(f"conv1d{p}", "nkilib.experimental.conv.conv1d", "conv1d", _conv1d(*p))
        for p in [
            (1, 16, 32, 64, 3, 1, (1, 1), 1, True),
            (2, 64, 128, 128, 5, 2, (2, 2), 2, False),
            (1, 200, 96, 40, 1, 1, (0, 0), 1, True),
        ]
    ),
    *(
        Case(
            f"depthwise_conv1d{p}",
            "nkilib.experimental.conv.depthwise_conv1d",
            "depthwise_conv1d_implicit_gemm",
            _depthwise_conv1d(*p),
            grid=2,
        )
        for p in [(1, 4, 64, 3, (1, 1), 1), (2, 8, 300, 5, (0, 0), 2), (1, 2, 200, 130, (2, 2), 1)]
    ),
    *(
        Case(
            f"dynamic_elementwise_add(tiles={n})",
            "nkilib.experimental.dynamic_shapes.dynamic_elementwise_add",
            "dynamic_elementwise_add",
            _dynamic_add(512, 1024, n),
        )
        for n in (0, 2, 4)
    ),
    *(
        Case(
            f"topk{p}",
            "nkilib.core.topk.rotational_topk",
            "topk",
            _topk(*p),
            grid=2 if p[0] * p[1] > 1 else 1,
            launch="host",
        )
        for p in [(1, 1, 1024, 8), (2, 4, 4096, 16), (1, 128, 2048, 32)]
    ),
]


def _compare(case: Case, inputs: dict, outs: list, goldens: list) -> None:
    if case.launch == "host":  # topk: values sorted, and the indices point at those values
        vals, idx = (np.asarray(o) for o in outs)
        x = inputs["inp"]
        want = goldens[0]
        np.testing.assert_allclose(vals.reshape(want.shape), want, rtol=1e-5)
        got = np.take_along_axis(x, idx.reshape(want.shape).astype(np.int64), -1)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        return
    assert len(outs) == len(goldens), f"{len(outs)} outputs, {len(goldens)} goldens"
    for o, g in zip(outs, goldens):
        o = np.asarray(o, np.float32)
        if case.kernel == "dynamic_elementwise_add":
            o = o[: g.shape[0]]
        np.testing.assert_allclose(o.reshape(g.shape), g, rtol=2e-2, atol=2e-2)


def child(root: str, index: int) -> None:
    import importlib

    from cuda2nki.nkisim import nki_namespace, simulate_kernel

    sys.path[:0] = [root, str(Path(root).parent)]
    case = CASES[index]
    inputs, goldens = case.build(np.random.default_rng(index))
    with nki_namespace(shadow=True):
        try:
            fn = getattr(importlib.import_module(case.module), case.kernel)
            if case.launch == "host":
                outs = list(fn[case.grid](**inputs))
            else:
                res = simulate_kernel(fn, inputs, grid=case.grid)
                outs = (
                    list(res.outputs) if isinstance(res.outputs, (list, tuple)) else [res.outputs]
                )
            _compare(case, inputs, outs, goldens)
        except BaseException as exc:  # noqa: BLE001 - classified and reported
            out = classify(exc)
        else:
            out = classify(None)
    print(MARK + json.dumps({"name": case.name, "outcome": out[0], "detail": out[1]}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", help="git directory of the NKI library repository")
    ap.add_argument("--rev", default="HEAD", help="library revision (default HEAD)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per case")
    ap.add_argument("-v", action="store_true", help="print each case")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child[0], int(a.child[1]))
        return 0
    if not a.library:
        ap.error("give --library")
    counts: collections.Counter = collections.Counter()
    project = str(Path(__file__).parents[1])
    with tempfile.TemporaryDirectory(prefix="public_nki_library_") as tmp:
        tree = Path(tmp) / "lib"
        _export(a.library, a.rev, tree)
        root = str(tree / "src" / "nkilib_src")
        for i, case in enumerate(CASES):
            cmd = [sys.executable, "-m", "bench.public_nki_library", "--child", root, str(i)]
            env_path = [project, *filter(None, [os.environ.get("PYTHONPATH")])]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(env_path))
            try:
                proc = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=a.timeout, env=env, check=False
                )
                rows = [
                    json.loads(ln[ln.index(MARK) + len(MARK) :])
                    for ln in proc.stdout.splitlines()
                    if MARK in ln
                ]
                row = (
                    rows[0]
                    if rows
                    else {
                        "name": case.name,
                        "outcome": "crash",
                        "detail": (proc.stderr.strip().splitlines() or ["?"])[-1][:160],
                    }
                )
            except subprocess.TimeoutExpired:
                row = {"name": case.name, "outcome": "timeout", "detail": ""}
            counts[row["outcome"]] += 1
            if a.v or row["outcome"] != "matched":
                print(f"library-kernel {row['outcome']:9} {row['name']}  {row['detail']}")
    cols = [c for c in COLUMNS if c not in ("memory", "broken")]
    print(f"\n{'suite':16}{'cases':>7}" + "".join(f"{c:>11}" for c in cols))
    print(
        f"{'library kernels':16}{sum(counts.values()):>7}"
        + "".join(f"{counts[k]:>11}" for k in cols)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
