from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source


@pytest.fixture
def parse():
    def _parse(text: str, filename: str = "k.cu", **kw) -> A.TranslationUnit:
        return parse_source(text, filename, **kw)

    return _parse
