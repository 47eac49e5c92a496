"""Golden generated ports: drift test.  Regenerate with ``CUDA2NKI_UPDATE_GOLDEN=1 pytest tests/golden``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuda2nki.pipeline import port_intent
from tests.passes import intent_examples as ex

HERE = Path(__file__).parent
EXAMPLES = [
    ex.saxpy,
    ex.bias_gelu,
    ex.softmax,
    ex.layernorm,
    ex.matmul,
    ex.gemv,
    ex.transpose,
    ex.stencil_2d,
    ex.dot,
]
UPDATE = os.environ.get("CUDA2NKI_UPDATE_GOLDEN") == "1"


def _update_requested(config) -> bool:
    try:
        return UPDATE or bool(config.getoption("--update-golden"))
    except ValueError:
        return UPDATE


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("make", EXAMPLES, ids=lambda f: f.__name__)
def test_golden(make, target, request) -> None:
    kernel = make()
    src = port_intent(kernel, target=target, source_name=f"{kernel.name}.cu")[1]
    path = HERE / "ports" / f"{kernel.name}.{target}.py"
    if _update_requested(request.config):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
    assert path.exists(), f"missing golden {path.name}: run with CUDA2NKI_UPDATE_GOLDEN=1"
    assert src == path.read_text(), (
        f"{path.name} drifted: run with CUDA2NKI_UPDATE_GOLDEN=1 and review"
    )
