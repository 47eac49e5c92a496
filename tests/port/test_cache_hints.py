"""Cache-hinted loads and stores (``__ldg``, ``__ldcs``, ``__ldca``, ``__ldlu``, ``__stcs``) are
plain memory accesses to the port: kernels spelling them on scalars and on float4 words, as
``&x[i]`` and as ``x + i``, through row aliases, in maps and in a block's shared-memory
reduction, port through a recogniser on both targets with the numbers of the CUDA kernel."""

from __future__ import annotations

import re

import pytest

from tests.port.acceptance import CORPUS, check_kernel

TARGETS = ["nki", "legacy"]

FORMS = {
    "basic/residual_cache_hints": "map",  # every hint on scalars, 2-D grid
    "basic/rowsum_cache_hints": "contract",  # __ldca via a row alias, __stcs of a tree total
    "basic/axpy_vec4_hints": "map",  # float4 __ldcs / __ldlu / __stcs, grid-stride
}
HINTS = ("__ldg", "__ldcs", "__ldca", "__ldlu", "__stcs")


def test_every_hint_is_spelled_by_two_corpus_kernels_at_least() -> None:
    for hint in HINTS:
        users = [
            rel for rel in FORMS if re.search(rf"\b{hint}\(", (CORPUS / f"{rel}.cu").read_text())
        ]
        assert len(users) >= 2, (hint, users)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rel", sorted(FORMS))
def test_cache_hinted_kernels_match_through_a_recogniser(rel, target, tmp_path) -> None:
    out = check_kernel(CORPUS / f"{rel}.cu", target, tmp_path, max_points=3)
    assert out.status == "match", out
    assert out.idiom == FORMS[rel]
    assert len(out.shapes) == 3
