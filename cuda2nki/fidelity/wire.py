"""The data-only channel between the checker and a sandboxed port: JSON and ``.npz``, nothing else.

Nothing that crosses the sandbox boundary is unpickled.  Arrays travel as uncompressed ``.npz``
read with ``allow_pickle=False`` (numeric and boolean dtypes only); everything else is JSON with a
small tagged encoding for the Python values a trace summary holds (tuples, sets, dicts keyed by
tuples).  Both are size-capped before they are parsed, so a hostile writer can neither run code in
the reader nor make it allocate without bound.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

#: dtype kinds an array from the sandbox may have: bool, signed/unsigned int, float, complex
SAFE_KINDS = frozenset("biufc")


class WireError(Exception):
    """Data from the sandbox that breaks the channel's rules (too big, pickled, malformed)."""


# --------------------------------------------------------------------------- tagged JSON


def encode(v: Any) -> Any:
    """A JSON-ready form of ``v``: tuples, sets and dicts with non-string keys are tagged."""
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if np.isfinite(v) else {"f": repr(v)}
    if isinstance(v, np.generic):
        return encode(v.item())
    if isinstance(v, tuple):
        return {"t": [encode(x) for x in v]}
    if isinstance(v, set | frozenset):
        return {"s": [encode(x) for x in sorted(v, key=repr)]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    if isinstance(v, Mapping):
        if all(isinstance(k, str) for k in v):
            return {"m": {k: encode(x) for k, x in v.items()}}
        return {"d": [[encode(k), encode(x)] for k, x in v.items()]}
    raise WireError(f"cannot send a {type(v).__name__} across the sandbox boundary")


def decode(v: Any) -> Any:
    """The inverse of :func:`encode`; anything else is a :class:`WireError`."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, list):
        return [decode(x) for x in v]
    if isinstance(v, dict) and len(v) == 1:
        ((tag, body),) = v.items()
        if tag == "t" and isinstance(body, list):
            return tuple(decode(x) for x in body)
        if tag == "s" and isinstance(body, list):
            return {_hashable(decode(x)) for x in body}
        if tag == "m" and isinstance(body, dict):
            return {str(k): decode(x) for k, x in body.items()}
        if tag == "d" and isinstance(body, list):
            return {_hashable(decode(p[0])): decode(p[1]) for p in body if _pair(p)}
        if tag == "f" and body in ("nan", "inf", "-inf"):
            return float(body)
    raise WireError("malformed value in the sandbox's reply")


def _pair(p: Any) -> bool:
    if isinstance(p, list) and len(p) == 2:
        return True
    raise WireError("malformed mapping in the sandbox's reply")


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        raise WireError("unhashable key in the sandbox's reply") from None
    return v


def dump_json(path: str, value: Any) -> None:
    """Write ``value`` (tagged) to ``path`` atomically (a reader never sees half a file)."""
    tmp = f"{path}.part"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(encode(value), f)
    os.replace(tmp, path)


def load_json(path: str, cap: int) -> Any:
    """Read a tagged JSON file of at most ``cap`` bytes."""
    with open(path, "rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise WireError(f"the sandbox's reply is larger than {cap} bytes")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WireError(f"the sandbox's reply is not valid JSON ({exc})") from None
    return decode(raw)


# --------------------------------------------------------------------------- arrays


#: separates an array's name from the ml_dtypes dtype its raw bits stand for
TAG = "::"
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _narrow_dtypes() -> dict[str, np.dtype]:
    """The ml_dtypes types (bf16, fp8, ...) by name: NumPy stores them as opaque void."""
    import ml_dtypes

    out = {}
    for name in ml_dtypes.__all__:
        t = getattr(ml_dtypes, name, None)
        if isinstance(t, type) and issubclass(t, np.generic):
            out[name] = np.dtype(t)
    return out


def save_arrays(path: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Uncompressed ``.npz``, written atomically.  bf16/fp8 arrays travel as their raw bits,
    named ``NAME::dtype``."""
    tmp = f"{path}.part.npz"
    plain = {}
    for k, v in arrays.items():
        a = np.asarray(v)
        if a.dtype.kind == "V" and a.dtype.fields is None and a.dtype.itemsize in _BITS:
            plain[f"{k}{TAG}{a.dtype.name}"] = a.view(_BITS[a.dtype.itemsize])
        else:
            plain[k] = a
    np.savez(tmp, **plain)
    os.replace(tmp, path)


def _restore(key: str, a: np.ndarray) -> tuple[str, np.ndarray]:
    name, _, dtype = key.partition(TAG)
    if not dtype:
        return key, a
    want = _narrow_dtypes().get(dtype)
    if want is None or a.dtype.kind != "u" or a.dtype.itemsize != want.itemsize:
        raise WireError(f"array {name!r} from the sandbox claims dtype {dtype!r}")
    return name, a.view(want)


def load_arrays(path: str, cap: int) -> dict[str, np.ndarray]:
    """Arrays from an ``.npz`` written by the other side: stored (not compressed) members whose
    sizes add up to at most ``cap`` bytes, numeric dtypes only, never unpickled."""
    if os.path.getsize(path) > cap:
        raise WireError(f"the sandbox's arrays are larger than {cap} bytes")
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if sum(i.file_size for i in infos) > cap:
                raise WireError(f"the sandbox's arrays are larger than {cap} bytes")
            if any(i.compress_type != zipfile.ZIP_STORED for i in infos):
                raise WireError("the sandbox's arrays are compressed")
        out: dict[str, np.ndarray] = {}
        with np.load(path, allow_pickle=False) as npz:
            for k in npz.files:
                a = npz[k]
                if a.dtype.kind not in SAFE_KINDS or a.dtype.fields is not None:
                    raise WireError(f"array {k!r} from the sandbox has dtype {a.dtype}")
                name, a = _restore(k, a)
                out[name] = a
        return out
    except WireError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, KeyError, EOFError) as exc:
        raise WireError(f"the sandbox's arrays cannot be read ({exc})") from None
