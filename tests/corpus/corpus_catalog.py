"""Discovery of the kernel corpus (``corpus/<suite>/<kernel>.cu`` + ``.toml`` + ``_ref.py``)."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"

Reference = Callable[[dict[str, np.ndarray], dict[str, Any]], dict[str, np.ndarray]]

#: default comparison tolerances (rtol, atol) by output dtype when the binding gives no hint
DEFAULT_TOL: dict[str, tuple[float, float]] = {
    "float32": (1e-5, 1e-5),
    "float64": (1e-12, 1e-12),
    "bfloat16": (1e-2, 1e-2),
    "float16": (1e-3, 1e-3),
}


@dataclass(frozen=True)
class Entry:
    suite: str
    name: str
    cu: Path

    @property
    def id(self) -> str:
        return f"{self.suite}/{self.name}"

    @property
    def toml(self) -> Path:
        return self.cu.with_suffix(".toml")

    @property
    def ref(self) -> Path:
        return self.cu.with_name(f"{self.name}_ref.py")

    @property
    def data(self) -> dict[str, Any]:
        return _toml(self.toml)

    @property
    def refuse(self) -> bool:
        return self.data.get("expect") == "refuse"

    @property
    def source(self) -> str:
        return self.cu.read_text(encoding="utf-8")

    def tolerance(self, dtype: str) -> tuple[float, float]:
        check = self.data.get("check", {})
        rtol, atol = DEFAULT_TOL.get(dtype, (0.0, 0.0))
        return float(check.get("rtol", rtol)), float(check.get("atol", atol))


@cache
def _toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def entries() -> list[Entry]:
    """Every kernel file of the corpus, sorted by suite and name."""
    return [Entry(p.parent.name, p.stem, p) for p in sorted(CORPUS.glob("*/*.cu"))]


def runnable() -> list[Entry]:
    return [e for e in entries() if not e.refuse]


def refused() -> list[Entry]:
    return [e for e in entries() if e.refuse]


@cache
def load_reference(ref: Path) -> Reference:
    """Import ``<kernel>_ref.py`` by path and return its ``reference`` function."""
    mod_name = "corpus_ref_" + re.sub(r"\W", "_", str(ref.relative_to(CORPUS).with_suffix("")))
    spec = importlib.util.spec_from_file_location(mod_name, ref)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference


_GLOBAL_RE = re.compile(r"__global__\s+void\s+(\w+)\s*\(([^)]*)\)")


def _strip_launch_bounds(source: str) -> str:
    """Remove ``__launch_bounds__(...)`` (balanced parentheses) wherever it stands."""
    out, pos = [], 0
    while (start := source.find("__launch_bounds__", pos)) >= 0:
        out.append(source[pos:start])
        i = source.index("(", start)
        depth = 0
        for j in range(i, len(source)):
            depth += {"(": 1, ")": -1}.get(source[j], 0)
            if depth == 0:
                break
        pos = j + 1
    out.append(source[pos:])
    return "".join(out)


def global_signatures(source: str) -> dict[str, list[str]]:
    """Kernel name -> parameter names, by a light regex over the source (for consistency checks)."""
    out: dict[str, list[str]] = {}
    for m in _GLOBAL_RE.finditer(_strip_launch_bounds(source)):
        params = [p.strip() for p in m.group(2).split(",") if p.strip()]
        names = [re.findall(r"\w+", p)[-1] for p in params]
        out[m.group(1)] = names + [x for p in params for x in _texture_extents(p, source)]
    return out


def _texture_extents(param: str, source: str) -> list[str]:
    """The size parameters the front end adds after a texture object parameter that
    ``tex1Dfetch/tex1D/tex2D/tex3D`` read: ``<name>_width[, _height[, _depth]]``."""
    words = re.findall(r"\w+", param)
    if len(words) < 2 or words[0] != "cudaTextureObject_t":
        return []
    texel = r"<\s*(?:float|u?int|unsigned|u?short|u?char|signed)[1-4]?(?:\s+\w+)*\s*>"
    dims = re.findall(rf"\btex([123]D|1Dfetch)\s*{texel}\s*\(\s*{words[-1]}\b", source)
    n = int(dims[0][0]) if dims else 0
    return [f"{words[-1]}_{d}" for d in ("width", "height", "depth")[:n]]


TABLE_HEAD = "| kernel | idiom | what it exercises |"


def readme_table() -> list[str]:
    """The *Kernels* table of ``corpus/README.md``, one row per kernel, from the bindings."""
    rows = [TABLE_HEAD, "|---|---|---|"]
    rows += [
        f"| `{e.id}` | {e.data.get('idiom')} | {e.data.get('description')} |" for e in entries()
    ]
    return rows


def refresh_readme() -> None:
    """Rewrite the *Kernels* table of ``corpus/README.md`` in place."""
    path = CORPUS / "README.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    head = lines.index(TABLE_HEAD)
    stop = head + 2
    while stop < len(lines) and lines[stop].startswith("| `"):
        stop += 1
    lines[head:stop] = readme_table()
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    refresh_readme()
