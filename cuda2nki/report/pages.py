"""The jinja2 environment of the HTML reports (``cuda2nki/report/templates``).

Templates only place values: every figure, row and chart coordinate is computed in Python
(:mod:`cuda2nki.report.review`, :mod:`cuda2nki.report.migration`, :mod:`cuda2nki.report.charts`)
and arrives ready to print.  Autoescaping is on; HTML built in Python arrives as ``Markup``.
The pages are self-contained: styles and scripts inline, nothing fetched from a network.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("cuda2nki", "report/templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=True,
    )


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
