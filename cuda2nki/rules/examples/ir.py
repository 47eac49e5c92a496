"""Examples for the tile IR's ids (C2N2400-2449), reached through the Python API.

The command line never hands user-written IR to the IR's parser, evaluators or verifier: they
check what the lifter and the pass pipeline produce.  These examples therefore write a small IR
file (the text form printed by ``cuda2nki port --emit intent|tiles``) and call the API on it.
"""

from __future__ import annotations

from cuda2nki.rules.examples.base import Example

_VERIFY = """\
from pathlib import Path
from cuda2nki.ir.parser import parse
from cuda2nki.ir.verify import verify

diagnostics = verify(parse(Path("k.ir").read_text(), "k.ir"))
"""

_PARSE = """\
from pathlib import Path
from cuda2nki.ir.parser import parse

parse(Path("k.ir").read_text(), "k.ir")
"""


def _verify(text: str) -> Example:
    return Example(files={"k.ir": text}, python=_VERIFY)


def _evaluate(text: str, inputs: str, scalars: str = "{}", tiles: bool = False) -> Example:
    fn = "evaluate_tiles" if tiles else "evaluate"
    mod = "evaluate_tiles" if tiles else "evaluate"
    snippet = (
        "from pathlib import Path\n\nimport numpy as np\n\n"
        "from cuda2nki.ir.parser import parse\n"
        f"from cuda2nki.ir.{mod} import {fn}\n\n"
        'kernel = parse(Path("k.ir").read_text(), "k.ir")\n'
        f"{fn}(kernel, {inputs}, {scalars})\n"
    )
    return Example(files={"k.ir": text}, python=snippet)


def _intent(body: str, params: str = "x: in float32[N, M], y: out float32[N], N: int32, M: int32"):
    return f"kernel k({params}) {{\n  {body}\n}}\n"


SCHED_MM = """\
kernel mm(A: in bfloat16[K, M], B: in bfloat16[K, N], C: out float32[M, N], M: int32, N: int32, K: int32) {
  for mi = range(0, ceildiv(M, 128), 1) affine {
    for ni = range(0, ceildiv(N, 512), 1) affine {
      alloc acc: float32[128, 512] psum;
      memset(dst=acc[...], value=0.0);
      for ki = range(0, ceildiv(K, 128), 1) sequential {
        alloc at: bfloat16[128, 128] sbuf;
        alloc bt: bfloat16[128, 512] sbuf;
        load(dst=at[...], src=A[ds(ki * 128, 128), ds(mi * 128, 128)]);
        load(dst=bt[...], src=B[ds(ki * 128, 128), ds(ni * 512, 512)]);
        matmul(dst=acc[...], stationary=at[...], moving=bt[...], accumulate=true);
      }
      alloc out: float32[128, 512] sbuf;
      tensor_copy(dst=out[...], src=acc[...]);
      store(dst=C[ds(mi * 128, 128), ds(ni * 512, 512)], src=out[...]);
    }
  }
}
"""


SCHED_ADD = """\
kernel vadd(a: in float32[N, F], c: out float32[N, F], N: int32, F: int32) {
  for t = range(0, ceildiv(N, 128), 1) affine {
    alloc ta: float32[128, F] sbuf;
    load(dst=ta[ds(0, min(128, N - t * 128)), ds(0, F)], src=a[ds(t * 128, min(128, N - t * 128)), ds(0, F)]);
    store(dst=c[ds(t * 128, min(128, N - t * 128)), ds(0, F)], src=ta[ds(0, min(128, N - t * 128)), ds(0, F)]);
  }
}
"""


def _mm(old: str, new: str) -> Example:
    assert old in SCHED_MM, old
    return _verify(SCHED_MM.replace(old, new, 1))


ELEMENTWISE = """\
kernel e(x: in float32[128, 64], y: out float32[128, 64]) {
  alloc t: float32[128, 64] sbuf;
  alloc s: float32[128, 1] sbuf;
  alloc o: float32[128, 64] sbuf;
  load(dst=t[...], src=x[...]);
  tensor_reduce(dst=s[...], op=max, src=t[...], axes=(1,));
  OP
  store(dst=y[...], src=o[...]);
}
"""


def _elementwise(op: str) -> Example:
    return _verify(ELEMENTWISE.replace("OP", op))


EXAMPLES = {
    "C2N2400": Example(files={"k.ir": "kernel k(x: in float32[N] {\n}\n"}, python=_PARSE),
    "C2N2401": _evaluate(
        "kernel k(x: in float32[N], y: out float32[N], N: int32, s: float32) {\n"
        "  @2:3 map: y[i] = x[i] * s for i < N;\n}\n",
        '{"x": np.ones(4, np.float32)}',
    ),
    "C2N2404": _evaluate(SCHED_ADD, '{"a": np.ones((4, 8), np.float32)}', '{"N": 4, "F": 8}'),
    "C2N2410": _evaluate(
        "kernel k(x: in float32[N], n: in int32[1], y: out float32[N], N: int32) {\n"
        "  @2:3 map: y[i] = x[i] for i < $(n[0]);\n}\n",
        '{"x": np.ones(4, np.float32), "n": np.array([2], np.int32)}',
    ),
    "C2N2414": _verify(
        "kernel k(x: in float32[N], n: in int32[1], y: out float32[N], N: int32) {\n"
        "  temp t: float32[$(n[0])];\n  @3:3 map: y[i] = x[i] for i < N;\n}\n"
    ),
    "C2N2416": Example(
        python="from cuda2nki.ir.nodes import *\n"
        "from cuda2nki.ir.verify import verify\n\n"
        'N, i = Sym("N"), Sym("i")\n'
        "kernel = Kernel(\n"
        '    "k",\n'
        '    params=(TensorDecl("x", (N,), "float32", Role.IN),\n'
        '            TensorDecl("y", (N,), "float32", Role.OUT), ScalarDecl("N", "int32")),\n'
        '    body=(Compute(Access("y", (i,)), Domain((Axis("i", N),)),\n'
        '                  Reduce(Op.ADD, (), Read("x", (i,)))),),\n'
        ")\n"
        "diagnostics = verify(kernel)  # the text form cannot spell a reduction without axes\n"
    ),
    "C2N2417": _elementwise("tensor_tensor(dst=o[...], op=exp, a=t[...], b=t[...]);"),
    "C2N2423": _verify(
        "kernel k(x: in float32[N], t: temp float32[N], y: out float32[N], N: int32) {\n"
        "  @2:3 map: y[i] = x[i] for i < N;\n}\n"
    ),
    "C2N2402": _evaluate(
        _intent("@2:3 map: y[i] = x[i, 0] for i < N;"),
        '{"x": np.ones((4, 3), np.float32)}',
        '{"N": 5, "M": 3}',
    ),
    "C2N2403": _evaluate(
        "kernel k(x: in float32[N], y: out float32[N], N: int32) {\n"
        "  @2:3 stencil: y[i] = x[i + 1] for i < N;\n}\n",
        '{"x": np.ones(4, np.float32)}',
    ),
    "C2N2405": _verify(_intent("@2:1 map: y[i] = z[i] for i < N;")),
    "C2N2406": _verify(_intent("@2:1 map: y[i] = x[i] for i < N;")),
    "C2N2407": _evaluate(
        "kernel k(x: in float32[N], y: out float32[N], N: int32, D: int32) {\n"
        "  @2:3 map: y[i] = x[i // D] for i < N;\n}\n",
        '{"x": np.ones(4, np.float32)}',
        '{"N": 4, "D": 0}',
    ),
    "C2N2408": _verify(_intent("@2:1 reduce: y[i] = reduce(sub, j < M: x[i, j]) for i < N;")),
    "C2N2409": _verify(_intent("@2:1 scan: y[i] = scan(add, i: x[i, 0]) for i < N;")),
    "C2N2411": _verify(_intent("@2:1 map: y[i] = x[i, j] for i < N;")),
    "C2N2412": _verify(
        "kernel k(x: in float32[N], x: out float32[N], y: out float32[N], N: int32) {}\n"
    ),
    "C2N2413": _verify(_intent("@2:1 map: y[i] = cast(x[i, 0], half) for i < N;")),
    "C2N2415": _verify(_intent("@2:1 map: y[i] = x[i, 0] for reduction i < N;")),
    "C2N2418": _verify(_intent("@2:1 map: x[i, 0] = 1.0 for i < N;")),
    "C2N2419": _verify(_intent("@2:1 map: y[i] = cast(x[i, 0] & 1, float32) for i < N;")),
    "C2N2420": _verify("kernel k(x: in float32[N], y: out float32[N], N: int32) {}\n"),
    "C2N2421": _verify(_intent("@2:1 reduce: y[k] = reduce(add, k < M: x[0, k]) for i < N;")),
    "C2N2422": _verify(_intent("@2:1 map: y[i] = x[i, j] for i < N, j < M;")),
    "C2N2424": _verify(
        "kernel k(x: in float32[N], y: out float32[N], N: int32) {\n"
        "  temp t: float32[N];\n"
        "  @3:1 map: y[i] = t[i] for i < N;\n"
        "  @4:1 map: t[i] = x[i] for i < N;\n}\n"
    ),
    "C2N2430": _mm("alloc at: bfloat16[128, 128] sbuf;", "alloc at: bfloat16[256, 128] sbuf;"),
    "C2N2431": _mm("alloc acc: float32[128, 512] psum;", "alloc acc: float32[128, 1024] psum;"),
    "C2N2432": _mm("alloc bt: bfloat16[128, 512] sbuf;", "alloc bt: bfloat16[128, 1024] sbuf;"),
    "C2N2433": _mm("alloc at: bfloat16[128, 128] sbuf;", "alloc at: int32[128, 128] sbuf;"),
    "C2N2434": _mm("alloc out: float32[128, 512] sbuf;", "alloc out: float32[512] sbuf;"),
    "C2N2435": _mm("src=out[...]);", "src=acc[...]);"),
    "C2N2436": _mm(
        "tensor_copy(dst=out[...], src=acc[...]);", "tensor_copy(dst=out[...], src=C[...]);"
    ),
    "C2N2437": _verify(
        "kernel r(x: in float32[128, 64], y: out float32[128, 1]) {\n"
        "  alloc t: float32[128, 64] sbuf;\n  alloc s: float32[128, 1] sbuf;\n"
        "  load(dst=t[...], src=x[...]);\n"
        "  tensor_reduce(dst=s[...], op=add, src=t[...], axes=(0,));\n"
        "  store(dst=y[...], src=s[...]);\n}\n"
    ),
    "C2N2438": _elementwise("tensor_copy(dst=o[...], src=t[ds(64, 128), ds(0, 64)]);"),
    "C2N2439": _verify(
        "kernel k(x: in float32[128, 4], y: out float32[128, 4]) {\n"
        "  for t = range(0, 4, 0) affine {\n    alloc a: float32[128, 4] sbuf;\n"
        "    load(dst=a[...], src=x[...]);\n    store(dst=y[...], src=a[...]);\n  }\n}\n"
    ),
    "C2N2440": _verify(
        "kernel k(x: in float32[128, 4], y: out float32[128, 4]) {\n"
        "  alloc a: float32[128, 40000] sbuf;\n  alloc b: float32[128, 40000] sbuf;\n"
        "  load(dst=a[ds(0, 128), ds(0, 4)], src=x[...]);\n"
        "  load(dst=b[ds(0, 128), ds(0, 4)], src=x[...]);\n"
        "  store(dst=y[...], src=b[ds(0, 128), ds(0, 4)]);\n}\n"
    ),
    "C2N2441": _verify(
        "kernel k(x: in float32[128, 256], y: out float32[256, 128]) {\n"
        "  alloc a: float32[128, 256] sbuf;\n  alloc b: float32[256, 128] psum;\n"
        "  load(dst=a[...], src=x[...]);\n  tensor_transpose(dst=b[...], src=a[...]);\n}\n"
    ),
    "C2N2442": _elementwise(
        "tensor_scalar(dst=o[...], src=t[...], op0=sub, operand0=t[ds(0, 128), ds(0, 4)]);"
    ),
    "C2N2443": _elementwise(
        "tensor_tensor(dst=o[...], op=add, a=t[ds(0, 64), ds(0, 64)], b=t[...]);"
    ),
    "C2N2444": _elementwise("int_arith(dst=o[...], op=exp, a=t[...], b=1);"),
    "C2N2445": _verify(
        _intent(
            "@2:1 map: y[i] = iterate(r: float32 = x[i, 0] -> carry(s, float32); true; 4; r)"
            " for i < N;"
        )
    ),
    "C2N2446": _verify(
        "kernel k(x: in float32[128, 4], y: out float32[128, 4]) {\n"
        "  for t = range(0, 2, 1) affine when t == 0 {\n"
        "    alloc a: float32[128, 4] sbuf;\n    load(dst=a[...], src=x[...]);\n"
        "    store(dst=y[...], src=a[...]);\n  }\n}\n"
    ),
    "C2N2448": _elementwise(
        'note(code="X123", text="not an id");\n  tensor_copy(dst=o[...], src=t[...]);'
    ),
}

NO_EXAMPLE = {
    "C2N2449": "reports an IR the verifier itself cannot walk (an exception inside the verifier), "
    "i.e. a bug in cuda2nki; no well-formed node tree triggers it",
}
