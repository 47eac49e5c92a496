"""A legacy ``mask=`` that is one predicate for the whole instruction (a causal test on loop
variables, ``i * 128 >= j * 512``, is a Python bool; a comparison of ``nl.arange`` of size 1 is
a mask of one element): true, the instruction runs as without a mask; false, it writes nothing
and the destination keeps its contents.  These take a fast path (no per-axis box search); the
results are those of the general path.  Also: ``nl.loop_reduce`` decodes its call site once,
however many iterations run it."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.nkisim import load_kernel, simulate_kernel
from cuda2nki.nkisim import loop_reduce as lr

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"

P, F, N = 128, 64, 4

# the masked instruction, written into t[...] (which holds the input before), and its value
CALLS = {
    "nisa_tensor_scalar": ("nisa.tensor_scalar(x, np.multiply, 3.0, mask={m})", lambda x: 3 * x),
    "nisa_activation": ("nisa.activation(op=nl.exp, data=x, mask={m})", np.exp),
    "nl_add": ("nl.add(x, 1.0, mask={m})", lambda x: x + 1),
    "nl_exp": ("nl.exp(x, mask={m})", np.exp),
}
# predicates on the loop variables i (0..N-1) and j (0..1): spelling and NumPy value
PREDICATES = {
    "ge": ("i * 128 >= j * 256", lambda i, j: i * 128 >= j * 256),
    "python_and": ("(i > 0) & (j == 0)", lambda i, j: i > 0 and j == 0),
    "numpy_bool": ("np.bool_(i != j)", lambda i, j: i != j),
    "unit_grid": ("(nl.arange(1)[None, :] + i) >= 2", lambda i, j: i >= 2),
}


def _run(tmp_path, call: str, pred: str):
    body = f"""
    import numpy as np

    @nki.jit
    def k(a):
        out = nl.ndarray(({N}, 2, {P}, {F}), nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range({N}):
            for j in nl.affine_range(2):
                x = nl.load(a[i])
                t = nl.ndarray(({P}, {F}), dtype=nl.float32, buffer=nl.sbuf)
                t[...] = nl.copy(x)
                t[...] = {call.format(m=pred)}
                nl.store(out[i, j], value=t)
        return out
    """
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(body))
    a = np.random.default_rng(len(call)).uniform(-1, 1, (N, P, F)).astype(np.float32)
    got = simulate_kernel(load_kernel(p, "k"), [a]).outputs
    return (got[0] if isinstance(got, (list, tuple)) else got), a


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("pred", sorted(PREDICATES))
def test_whole_instruction_predicate_runs_or_skips_the_instruction(tmp_path, call, pred):
    src, value = CALLS[call]
    spelling, keep = PREDICATES[pred]
    got, a = _run(tmp_path, src, spelling)
    for i in range(N):
        for j in range(2):
            want = value(a[i]) if keep(i, j) else a[i]
            np.testing.assert_allclose(got[i, j], want, rtol=1e-6, err_msg=f"i={i} j={j}")


def test_loop_reduce_decodes_its_call_site_once(tmp_path):
    body = """
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        for i in nl.affine_range(6):
            x = nl.load(a[i])
            acc = nl.loop_reduce(x, np.add, loop_indices=[i])
        nl.store(out, value=acc)
        return out
    """
    p = tmp_path / "port.py"
    p.write_text(LEG + "import numpy as np\n" + textwrap.dedent(body))
    a = np.random.default_rng(3).standard_normal((6, 128, 64)).astype(np.float32)
    lr._store_after.cache_clear()
    got = simulate_kernel(load_kernel(p, "k"), [a]).outputs
    got = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_allclose(got, a.sum(axis=0), rtol=1e-5, atol=1e-5)
    info = lr._store_after.cache_info()
    assert info.misses == 1 and info.hits == 5
