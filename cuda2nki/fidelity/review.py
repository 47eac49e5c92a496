"""The comparison a review makes with cuda2nki's own port of the same kernel (cost model)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from cuda2nki.diagnostics import DiagnosticError


def generated_baseline(
    cuda_path: str | Path, report: dict[str, Any], opts: dict[str, Any]
) -> dict[str, Any] | None:
    """Port the CUDA kernel with cuda2nki, check that port the same way, and return its cost figures.

    None when no port can be generated or it does not pass its own check (then there is nothing
    trustworthy to compare with).
    """
    from cuda2nki import api

    try:  # the binding of the reviewed kernel: --binding, else the sidecar's, else inferred
        res = api.port(
            cuda_path,
            binding=opts.get("binding"),
            kernel=report["kernel"],
            defines=opts.get("defines"),
            include_dirs=opts.get("include_dirs") or (),
            templates=opts.get("templates"),
        )
    except (DiagnosticError, ImportError):
        return None
    if res.source is None:
        return None
    with tempfile.TemporaryDirectory(prefix="c2n-review-") as tmp:
        path = Path(tmp) / "generated_port.py"
        path.write_text(res.source)
        keep = {
            k: v
            for k, v in opts.items()
            if k
            in (
                "binding",
                "kernel",
                "overrides",
                "hw",
                "timeout",
                "memory_mb",
                "defines",
                "include_dirs",
                "templates",
            )
        }
        try:
            gen = api.check(cuda_path, path, seeds=1, **keep).to_dict()
        except DiagnosticError:
            return None
    prof = (gen.get("trace") or {}).get("profile") or {}
    t = float(prof["overlapped_ns"]) / 1000.0 if "overlapped_ns" in prof else None
    return {"verdict": gen["verdict"], "time_us": t, "idiom": res.idiom, "literal": res.literal}
