"""The IR verifier: clean kernels stay clean, each defect yields its id at its location."""

import pytest
from hypothesis import HealthCheck, given, settings

from cuda2nki.diagnostics import DiagnosticError, rule
from cuda2nki.ir.parser import parse
from cuda2nki.ir.verify import verify
from cuda2nki.rules.examples.ir import SCHED_MM  # the catalogue's scheduled matmul

from .kernels import ALL, kernel
from .strategies import KERNELS
from .test_nodes import _doc_examples


def ids(k):
    return sorted({d.code for d in verify(k)})


@pytest.mark.parametrize("name", sorted(ALL))
def test_corpus_idioms_verify_clean(name):
    assert verify(kernel(name)) == []


def test_docstring_examples_verify_clean():
    ns = _doc_examples()
    for name in ("vadd", "softmax", "matmul", "transpose"):
        assert verify(ns[name]) == [], name


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(KERNELS)
def test_verifier_never_raises(k):
    for d in verify(k):
        assert rule(d.code)  # every id is declared
        assert d.code != "C2N2449", d.message  # well-typed nodes never crash the verifier


INTENT_HEAD = 'kernel k(x: in float32[N, M], y: out float32[N], N: int32, M: int32) @"k.cu":1:1 {\n'


@pytest.mark.parametrize(
    "body, expected",
    [
        ("@2:1 map: y[i] = z[i] for i < N;", "C2N2405"),
        ("@2:1 map: y[i] = x[i] for i < N;", "C2N2406"),
        ("@2:1 map: y[i] = x[i, j] for i < N;", "C2N2411"),
        ("@2:1 reduce: y[k] = reduce(add, k < M: x[0, k]) for i < N;", "C2N2421"),
        ("@2:1 map: y[i] = cast(x[i, 0], half) for i < N;", "C2N2413"),
        ("@2:1 map: y[i] = x[i, 0] for reduction i < N;", "C2N2415"),
        ("@2:1 reduce: y[i] = reduce(sub, j < M: x[i, j]) for i < N;", "C2N2408"),
        ("@2:1 map: x[i, 0] = 1.0 for i < N;", "C2N2418"),
        ("@2:1 map: y[i] = x[i, j] for i < N, j < M;", "C2N2422"),
        ("@2:1 scan: y[i] = scan(add, i: x[i, 0]) for i < N;", "C2N2409"),
        ("@2:1 map: y[i] = cast(cast(x[i, 0], int32) & 1, float32) for i < N;", None),
        ("@2:1 map: y[i] = cast(x[i, 0] & 1, float32) for i < N;", "C2N2419"),
        ("@2:1 map: y[i] = neg(x[i, 0], x[i, 0]) for i < N;", "parse"),
    ],
)
def test_intent_defects(body, expected):
    text = INTENT_HEAD + "  " + body + "\n}"
    if expected == "parse":
        with pytest.raises(DiagnosticError):
            parse(text)
        return
    diags = verify(parse(text))
    if expected is None:
        assert diags == []
        return
    assert expected in {d.code for d in diags}, diags
    d = next(d for d in diags if d.code == expected)
    assert (d.loc.file, d.loc.line) == ("k.cu", 2)


def test_output_never_written_and_duplicates():
    k = parse("kernel k(x: in float32[N], x: out float32[N], y: out float32[N], N: int32) {}")
    assert ids(k) == ["C2N2412", "C2N2420"]


SCHED_OK = """
kernel vadd(a: in float32[N, F], b: in float32[N, F], c: out float32[N, F], N: int32, F: int32) {
  for t = range(0, ceildiv(N, 128), 1) affine {
    alloc ta: float32[128, F] sbuf;
    alloc tb: float32[128, F] sbuf;
    alloc tc: float32[128, F] sbuf;
    load(dst=ta[ds(0, min(128, N - t * 128)), ds(0, F)], src=a[ds(t * 128, min(128, N - t * 128)), ds(0, F)]);
    load(dst=tb[ds(0, min(128, N - t * 128)), ds(0, F)], src=b[ds(t * 128, min(128, N - t * 128)), ds(0, F)]);
    tensor_tensor(dst=tc[ds(0, min(128, N - t * 128)), ds(0, F)], op=add,
                  a=ta[ds(0, min(128, N - t * 128)), ds(0, F)], b=tb[ds(0, min(128, N - t * 128)), ds(0, F)]);
    store(dst=c[ds(t * 128, min(128, N - t * 128)), ds(0, F)], src=tc[ds(0, min(128, N - t * 128)), ds(0, F)]);
  }
}
"""


def test_scheduled_kernels_verify_clean():
    assert verify(parse(SCHED_OK)) == []
    assert verify(parse(SCHED_MM)) == []


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("alloc acc: float32[128, 512] psum;", "alloc acc: float32[128, 1024] psum;", "C2N2431"),
        ("alloc at: bfloat16[128, 128] sbuf;", "alloc at: bfloat16[256, 128] sbuf;", "C2N2430"),
        ("alloc bt: bfloat16[128, 512] sbuf;", "alloc bt: bfloat16[128, 1024] sbuf;", "C2N2432"),
        ("alloc acc: float32[128, 512] psum;", "alloc acc: float32[128, 512] sbuf;", "C2N2432"),
        ("alloc at: bfloat16[128, 128] sbuf;", "alloc at: int32[128, 128] sbuf;", "C2N2433"),
        ("src=out[...]);", "src=acc[...]);", "C2N2435"),
        ("load(dst=at[...],", "load(dst=C[ds(0, 128), ds(0, 128)],", "C2N2435"),
        (
            "tensor_copy(dst=out[...], src=acc[...]);",
            "tensor_copy(dst=out[...], src=C[...]);",
            "C2N2436",
        ),
        ("alloc out: float32[128, 512] sbuf;", "alloc out: float32[512] sbuf;", "C2N2434"),
        ("store(dst=C[", "store(dst=A[", "C2N2418"),
        ("matmul(dst=acc[...],", "matmul(dst=acc2[...],", "C2N2405"),
        (
            "ds(ki * 128, 128), ds(mi * 128, 128)]",
            "ds(kk * 128, 128), ds(mi * 128, 128)]",
            "C2N2411",
        ),
    ],
)
def test_scheduled_defects(old, new, expected):
    assert old in SCHED_MM
    found = ids(parse(SCHED_MM.replace(old, new, 1)))
    assert expected in found, found


def test_reduce_on_partition_axis_and_tile_scope():
    text = """
    kernel r(x: in float32[128, 64], y: out float32[128, 1]) {
      alloc t: float32[128, 64] sbuf;
      alloc s: float32[128, 1] sbuf;
      load(dst=t[...], src=x[...]);
      tensor_reduce(dst=s[...], op=add, src=t[...], axes=(0,));
      store(dst=y[...], src=s[...]);
    }"""
    assert ids(parse(text)) == ["C2N2437"]
    scoped = """
    kernel r(x: in float32[128, 64], y: out float32[128, 64]) {
      for i = range(0, 2, 1) affine { alloc t: float32[128, 64] sbuf; }
      store(dst=y[...], src=t[...]);
    }"""
    assert ids(parse(scoped)) == ["C2N2405"]


def test_temporary_read_before_written():
    k = parse(
        """
    kernel k(x: in float32[N], y: out float32[N], N: int32) {
      temp t: float32[N];
      @3:1 map: y[i] = t[i] for i < N;
      @4:1 map: t[i] = x[i] for i < N;
    }""",
        "k.ir",
    )
    diags = verify(k)
    assert [d.code for d in diags] == ["C2N2424"] and diags[0].loc.line == 3


def test_per_partition_operands_and_partition_spans():
    base = """
    kernel e(x: in float32[128, 64], y: out float32[128, 64]) {
      alloc t: float32[128, 64] sbuf;
      alloc s: float32[128, 1] sbuf;
      alloc o: float32[128, 64] sbuf;
      load(dst=t[...], src=x[...]);
      tensor_reduce(dst=s[...], op=max, src=t[...], axes=(1,));
      OP
      store(dst=y[...], src=o[...]);
    }"""
    ok = "tensor_scalar(dst=o[...], src=t[...], op0=sub, operand0=s[...]);"
    assert ids(parse(base.replace("OP", ok))) == []
    wide = "tensor_scalar(dst=o[...], src=t[...], op0=sub, operand0=t[ds(0, 128), ds(0, 4)]);"
    assert ids(parse(base.replace("OP", wide))) == ["C2N2442"]
    spans = "tensor_tensor(dst=o[...], op=add, a=t[ds(0, 64), ds(0, 64)], b=t[...]);"
    assert ids(parse(base.replace("OP", spans))) == ["C2N2443"]


def test_note_with_a_bad_code():
    k = parse('kernel k() {\n  note(code="X123", text="not an id");\n}')
    assert ids(k) == ["C2N2448"]
