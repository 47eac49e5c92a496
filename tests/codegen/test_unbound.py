"""The generated-port self-check: reads of names nothing has bound yet, in program order."""

from __future__ import annotations

import pytest

from cuda2nki.codegen.unbound import unbound_reads

HEAD = "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(a, n):\n"

UNBOUND = {
    "loop-variable-in-an-earlier-bound": (
        "    for t in range(n - j):\n        for j in range(3):\n            a = a + j\n",
        "j",
    ),
    "used-before-assignment": ("    b = c + 1\n    c = 2\n    return b\n", "c"),
    "augmented-before-assignment": ("    acc += a\n    return acc\n", "acc"),
    "never-bound": ("    return nl.copy(a[0:width])\n", "width"),
}

BOUND = {
    "assigned-then-read": "    c = n + 1\n    return a[0:c]\n",
    "loop-target-in-body": "    for i in range(n):\n        a = a + i\n    return a\n",
    "bound-in-a-branch": "    if n:\n        m = 1\n    else:\n        m = 2\n    return m\n",
    "comprehension-and-lambda": "    xs = [q * 2 for q in range(n)]\n    f = lambda z: z + 1\n"
    "    return f(xs[0])\n",
    "module-constant-and-builtin": "    return min(_TILE, len(a))\n",
}


@pytest.mark.parametrize("case", sorted(UNBOUND))
def test_a_read_before_any_binding_is_found(case: str) -> None:
    body, name = UNBOUND[case]
    got = unbound_reads(HEAD + body)
    assert [r.name for r in got] == [name]
    assert got[0].function == "k"


@pytest.mark.parametrize("case", sorted(BOUND))
def test_bound_names_are_not_reported(case: str) -> None:
    assert unbound_reads(HEAD + BOUND[case] + "\n\n_TILE = 128\n") == []


def test_helpers_outside_the_kernel_are_not_checked() -> None:
    src = "def helper(x):\n    return x + MISSING\n\n\n" + HEAD + "    return helper(a)\n"
    assert unbound_reads(src) == []
