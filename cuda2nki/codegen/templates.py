"""The packaged jinja2 templates (``cuda2nki/templates``): see :mod:`cuda2nki.codegen.render`."""

from cuda2nki.codegen.render import TARGETS, arguments, environment, instruction, module, ops

__all__ = ["TARGETS", "arguments", "environment", "instruction", "module", "ops"]
