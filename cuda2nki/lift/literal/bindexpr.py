"""A binding's C size expressions spelled as Python with C semantics."""

from __future__ import annotations

import ast as pyast

from cuda2nki.lift.literal.helpers import _py

#: functions a binding's size expressions may call that Python has under the same name
_BINDING_FUNCS = frozenset({"min", "max", "int", "float"})


class _CToPy(pyast.NodeTransformer):
    def visit_BinOp(self, node: pyast.BinOp) -> pyast.AST:  # noqa: N802
        self.generic_visit(node)
        helper = {pyast.Div: "_c2n_idiv", pyast.Mod: "_c2n_imod"}.get(type(node.op))
        if helper is None:
            return node
        return pyast.Call(pyast.Name(helper, pyast.Load()), [node.left, node.right], [])

    def visit_Call(self, node: pyast.Call) -> pyast.AST:  # noqa: N802
        # the functions of a binding's expressions (cuda2nki.binding) are Python's own, under
        # their own names: only their arguments are renamed (a size called `min` would be)
        node.args = [self.visit(a) for a in node.args]
        if isinstance(node.func, pyast.Name) and node.func.id == "ceil_div":
            node.func = pyast.Name("_c2n_ceil_div", pyast.Load())
        elif not (isinstance(node.func, pyast.Name) and node.func.id in _BINDING_FUNCS):
            node.func = self.visit(node.func)
        return node

    def visit_Name(self, node: pyast.Name) -> pyast.AST:  # noqa: N802
        if node.id.startswith("_c2n_"):
            return node
        return pyast.Name(_py(node.id), node.ctx)


def c_expr_to_py(text: str) -> str:
    """A binding's C expression (``ceil_div(N, 256)``, ``n / 2``) as Python with C semantics."""
    tree = pyast.parse(text.strip(), mode="eval")
    return pyast.unparse(_CToPy().visit(tree))
