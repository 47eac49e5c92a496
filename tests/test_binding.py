from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuda2nki.binding import (
    binding_from_dict,
    coerce_array,
    eval_c_expr,
    generate_inputs,
    load_binding,
    load_npz,
    parse_set_options,
    save_npz,
)
from cuda2nki.diagnostics import DiagnosticError

SOFTMAX = """
kernel = "softmax_forward"
[launch]
grid = ["ceil_div(N, 256)"]
block = [256]
shared_bytes = "256 * 4"
[params]
out = { shape = ["N", "C"], dtype = "float32", role = "out" }
inp = { shape = ["N", "C"], dtype = "bfloat16", role = "in" }
idx = { shape = ["N"], dtype = "int32", role = "in", range = [0, "C"] }
N = 1024
C = 768
[[check.shapes]]
N = 129
C = 513
"""


def _write(tmp_path, text: str):
    p = tmp_path / "k.toml"
    p.write_text(text)
    return p


@given(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1).filter(lambda b: b != 0))
def test_division_truncates_like_c(a: int, b: int) -> None:
    q = eval_c_expr("a / b", {"a": a, "b": b})
    r = eval_c_expr("a % b", {"a": a, "b": b})
    assert q == int(a / b) if abs(a) < 2**52 else True
    assert q * b + r == a
    assert r == 0 or (r > 0) == (a > 0)
    assert abs(r) < abs(b)


@given(st.integers(-(10**9), 10**9), st.integers(1, 10**6))
def test_ceil_div(a: int, b: int) -> None:
    assert eval_c_expr("ceil_div(a, b)", {"a": a, "b": b}) == -((-a) // b)


def test_load_resolve_and_points(tmp_path) -> None:
    b = load_binding(_write(tmp_path, SOFTMAX))
    assert b.kernel == "softmax_forward"
    assert [t.name for t in b.tensors] == ["out", "inp", "idx"]
    r = b.resolve({"N": 1000})
    assert r.grid == (4, 1, 1) and r.block == (256, 1, 1) and r.shared_bytes == 1024
    assert r.shapes["out"] == (1000, 768)
    assert [p["N"] for p in b.test_points()] == [1024, 129]


def test_generate_inputs_respects_dtype_range_and_seed(tmp_path) -> None:
    r = load_binding(_write(tmp_path, SOFTMAX)).resolve({"N": 7, "C": 5})
    a = generate_inputs(r, seed=3)
    b = generate_inputs(r, seed=3)
    assert a["inp"].dtype == ml_dtypes.bfloat16 and a["inp"].shape == (7, 5)
    assert a["idx"].min() >= 0 and a["idx"].max() < 5
    assert np.all(a["out"] == 0)
    assert np.array_equal(a["inp"].astype(np.float32), b["inp"].astype(np.float32))
    c = generate_inputs(r, seed=4)
    assert not np.array_equal(a["inp"].astype(np.float32), c["inp"].astype(np.float32))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[params]\nx = 1\n", "[launch]"),
        (
            '[launch]\ngrid=[1]\nblock=[1]\n[params]\nx = { shape = ["N"], dtype = "float32" }\n',
            "role",
        ),
        (
            '[launch]\ngrid=[1]\nblock=[1]\n[params]\nx = { shape = ["N"], dtype = "f33", role = "in" }\n',
            "unknown dtype",
        ),
        ("[launch\n", "Expected"),
    ],
)
def test_bad_bindings_are_c2n0003(tmp_path, text: str, needle: str) -> None:
    with pytest.raises(DiagnosticError) as exc:
        load_binding(_write(tmp_path, text))
    d = exc.value.diagnostic
    assert d.code == "C2N0003" and needle in d.message


def test_unknown_name_in_expression(tmp_path) -> None:
    b = binding_from_dict({"launch": {"grid": ["M"], "block": [1]}, "params": {"N": 4}})
    with pytest.raises(DiagnosticError, match="unknown name 'M'"):
        b.resolve()
    with pytest.raises(DiagnosticError, match="unknown scalar"):
        b.resolve({"Q": 3})


def test_npz_round_trip_widens_bf16(tmp_path) -> None:
    b = load_binding(_write(tmp_path, SOFTMAX))
    r = b.resolve({"N": 2, "C": 3})
    arrs = generate_inputs(r, seed=0)
    save_npz(tmp_path / "x.npz", arrs)
    back = load_npz(tmp_path / "x.npz")
    assert back["inp"].dtype == np.float32
    again = coerce_array(back["inp"], b.tensor("inp"), (2, 3))
    assert again.dtype == ml_dtypes.bfloat16
    assert np.array_equal(again.astype(np.float32), arrs["inp"].astype(np.float32))
    with pytest.raises(DiagnosticError, match="cannot be safely cast"):
        coerce_array(back["inp"].reshape(-1)[:2], b.tensor("idx"), (2,))


def test_parse_set_options() -> None:
    assert parse_set_options(["N=129", "alpha=0.5", "M=0x10"]) == {"N": 129, "alpha": 0.5, "M": 16}
    with pytest.raises(DiagnosticError):
        parse_set_options(["N"])
