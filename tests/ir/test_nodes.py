"""Node construction, coercion, hashing and the docstring's worked examples."""

import re
import textwrap

import numpy as np
import pytest

import cuda2nki.ir.nodes as nd
from cuda2nki.ir.nodes import (
    Add,
    Axis,
    AxisKind,
    Binary,
    CeilDiv,
    Const,
    Dyn,
    Lit,
    Min,
    Op,
    Read,
    Role,
    Sym,
    TensorDecl,
)


def _doc_examples() -> dict:
    ns = dict(vars(nd))
    for block in re.findall(r"::\n\n((?:    .*\n|\n)+)", nd.__doc__):
        exec(textwrap.dedent(block).replace("...,  #", "#"), ns)
    return ns


def test_docstring_examples_build():
    ns = _doc_examples()
    for name in ("vadd", "softmax", "matmul", "transpose"):
        k = ns[name]
        assert isinstance(k, nd.Kernel)
        assert hash(k) == hash(_doc_examples()[name])
        assert not k.is_scheduled
    assert [t.name for t in ns["softmax"].temps] == ["m", "e", "s"]


def test_coercion_and_value_equality():
    d = TensorDecl("x", [128, "N"], "float32", "out")
    assert d.shape == (Const(128), Sym("N")) and d.role is Role.OUT
    assert Binary("add", Lit(1.0), Lit(2.0)).op is Op.ADD
    assert Axis("k", 4, "reduction").kind is AxisKind.REDUCTION
    assert Read("a", ["i"]) == Read("a", (Sym("i"),))
    assert Lit(float("nan")) == Lit(float("nan"))
    assert Lit(1, "int32") != Lit(1.0, "int32")
    assert Lit(True, "bool") != Lit(1, "bool")


def test_size_arithmetic_and_evaluate():
    i, n = Sym("i"), Sym("N")
    e = Min(128, n - i * 128)
    assert e.evaluate({"N": 300, "i": 2}) == 44
    assert CeilDiv(n, 128).evaluate({"N": 300}) == 3
    assert Const(3) * 4 == Const(12)
    assert isinstance(i + 0, Add)  # no silent simplification of symbolic trees
    arr = e.evaluate({"N": 300, "i": np.arange(3)})
    assert arr.tolist() == [128, 128, 44]
    assert e.free_syms() == {"i", "N"}
    with pytest.raises(ValueError):
        Dyn(Read("idx", ("i",))).evaluate({"i": 0})
    with pytest.raises(TypeError):
        TensorDecl("x", (1.5,), "float32")


def test_package_entry_points_and_plain_text():
    import cuda2nki.ir as ir

    k = _doc_examples()["vadd"]
    k = k.replace(
        loc=nd.SourceLoc("v.cu", 3, 1), body=(k.body[0].replace(loc=nd.SourceLoc("v.cu", 5, 3)),)
    )
    text = ir.to_text(k)
    assert "@5:3 map:" in text and '@"v.cu":3:1' in text
    assert "@" not in ir.to_text(k, locs=False)
    from cuda2nki.ir import evaluate, verify

    assert ir.parse(text) == k and verify.verify(k) == []
    assert callable(evaluate.error_bound) and callable(ir.error_bound)
    assert ir.Lit(np.float32(0.5)).value == 0.5 and type(ir.Lit(np.float32(0.5)).value) is float
    with pytest.raises(AttributeError):
        _ = ir.no_such_thing
