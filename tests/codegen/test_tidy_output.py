"""Generated ports read like hand-written ones: no constant arithmetic left for Python to fold, no
instruction that returns its input unchanged (``x * 1.0``, ``x + 0.0``, ``max(x, -inf)``).

The lint itself is pinned on small sources; the corpus test ports every corpus kernel for both
targets (a sample in the default run, the whole corpus with ``-m slow``, which also checks each
port against the SIMT interpreter)."""

from __future__ import annotations

import pytest

from cuda2nki.codegen.lint import untidy
from tests.port.acceptance import CORPUS, check_kernel, corpus_kernels

UNTIDY = {
    "for t in range(1 // (128 * min(512, max(1, (1 + 127) // 128)))):\n    pass\n": "constant",
    "n = min(512, 4)\n": "constant",
    "n = 0.5 * 2.0\n": "constant",
    "g_n = min(128, min(512, C - 512 * g))\n": "constant",
    "n = max(max(1, N), 4)\n": "constant",
    "n = max(0, 0 - 65536 * t + 1)\n": "constant",
    "n = min(8, 0 - j - 2)\n": "constant",
    "x = a[1 * i_f]\n": "identity",
    "x = a[i + 0]\n": "identity",
    "x = a[i // 1]\n": "identity",
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.multiply, operand0=1.0, reverse0=False)\n": (
        "identity"
    ),
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.add, operand0=0.0, reverse0=True)\n": "identity",
    'nisa.tensor_scalar(dst=o, data=d, op0=nl.maximum, operand0=float("-inf"))\n': "identity",
    "o = nisa.tensor_scalar(d[i_p, i_f], op0=nl.exp, operand0=2.0, op1=nl.divide, "
    "operand1=1.0)\n": "identity",
    "nisa.tensor_scalar(dst=v, data=v, op0=nl.bitwise_or, operand0=0, reverse0=False)\n": (
        "identity"
    ),
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.bitwise_xor, operand0=0)\n": "identity",
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.right_shift, operand0=0)\n": "identity",
    "nisa.tensor_copy(dst=state, src=state)\n": "identity",
    "nisa.tensor_copy(dst=t[0:n, 0:4], src=t[0:n, 0:4])\n": "identity",
}

TIDY = [
    "n = min(512, max(1, (N + 127) // 128))\n",
    "n = min(128, min(M, K))\n",  # one constant bound
    "x = a[0 * i_p]\n",  # a zero factor shapes a legacy index grid
    "m = (v + 2**31) % 2**32 - 2**31\n",  # bit widths spelled as powers of two
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.subtract, operand0=0.0, reverse0=True)\n",
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.divide, operand0=1.0, reverse0=True)\n",
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.maximum, operand0=0.0)\n",
    "nisa.memset(dst=o, value=float('-inf'))\n",
    "y = -1.0\n",
    "n = max(0, 1 - 65536 * t)\n",
    "n = 0 - j\n",
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.bitwise_or, operand0=1)\n",
    "nisa.tensor_scalar(dst=o, data=d, op0=nl.left_shift, operand0=0, reverse0=True)\n",
    "nisa.tensor_copy(dst=state, src=prev)\n",
    "nisa.tensor_copy(dst=t[0:n, 1:4], src=t[0:n, 0:3])\n",
    "x = nl.bitwise_or(v, 0, dtype=nl.uint32)\n",  # a conversion keeping the bit pattern
]


@pytest.mark.parametrize(("src", "kind"), UNTIDY.items())
def test_untidy_source_is_found(src: str, kind: str) -> None:
    found = untidy(src)
    assert found and {f.kind for f in found} == {kind}, found


@pytest.mark.parametrize("src", TIDY)
def test_tidy_source_passes(src: str) -> None:
    assert untidy(src) == []


SAMPLE = (
    "lowp/dot_fp16",  # a one-element result: every tile size is a constant
    "basic/sigmoid_macro",  # 1.0 / (1.0 + exp(-x)): a reciprocal, never times 1.0
    "stencil/fir_constant",  # a sum started from 0.0
    "norm/softmax_block_tree",  # a maximum started from -inf
    "linalg/attention_scores",  # iota index grids
    "linalg/sgemm_tiled32",  # tiles zero-filled in else branches, lifted to a contraction
    "basic/reverse_block_async",  # the literal lowering's wrapped integer constants
    "stencil/file_shared_smooth",  # zero-padded halo windows: sizes that start from zero
)


def _port_source(rel: str, target: str) -> str | None:
    from cuda2nki.binding import load_binding
    from cuda2nki.pipeline import port_file

    path = CORPUS / f"{rel}.cu"
    return port_file(path, binding=load_binding(path.with_suffix(".toml")), target=target).source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("rel", SAMPLE)
def test_sample_ports_are_tidy(rel: str, target: str) -> None:
    src = _port_source(rel, target)
    assert src is not None
    assert [str(u) for u in untidy(src)] == []


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("path", corpus_kernels(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_corpus_port_is_tidy_and_still_matches(path, target, tmp_path) -> None:
    rel = f"{path.parent.name}/{path.stem}"
    src = _port_source(rel, target)
    if src is None:
        pytest.skip(f"{rel} is refused on purpose")
    assert [str(u) for u in untidy(src)] == []
    out = check_kernel(path, target, tmp_path)
    assert out.status in ("match", "literal"), out
