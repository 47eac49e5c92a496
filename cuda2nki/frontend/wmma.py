"""Warp-matrix (``nvcuda::wmma``) fragments and operations.

A fragment (``wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;``) is a
matrix held by a whole warp, ``rows x cols`` elements spread over its 32 lanes (``matrix_a``:
``M x K``, ``matrix_b``: ``K x N``, ``accumulator``: ``M x N``).  The front end lowers it to a
local array of ``num_elements = rows * cols / 32`` elements per thread (``ArrayType(elem,
(num_elements,))``; an array of fragments ``F a[2]`` is ``ArrayType(elem, (2, num_elements))``),
of the fragment's element type: ``half`` -> float16, ``__nv_bfloat16`` -> bfloat16,
``wmma::precision::tf32`` -> float32, ``double``, ``signed``/``unsigned char`` -> int8/uint8, and
``float``/``half``/``double``/``int`` accumulators.  ``f.num_elements`` is that count (an
``IntLit``) and ``f.x[i]`` is element ``i`` of the thread's array.

Element mapping.  CUDA leaves unspecified which lane holds which matrix element.  We choose:
lane ``l`` holds the elements ``l * num_elements + i`` (``i < num_elements``) of the matrix in
row-major order, i.e. a contiguous run of rows.  Fragments of the same role and shape share the
mapping, so element-wise code (``c.x[i] = alpha * acc.x[i] + beta * c.x[i]``) means what it means
on a GPU whatever the mapping; code that depends on the mapping is not portable CUDA.

Operations (warp-collective: every lane of the warp must take part; the pointer and ``ldm`` must
be the same in all lanes):

- ``wmma::fill_fragment(f, v)`` -> ``Call("__c2n_wmma_fill", (f, v))``: every element is ``v``
  converted to the element type;
- ``wmma::load_matrix_sync(f, p, ldm)`` (``matrix_a``/``matrix_b``: layout from the type) and
  ``wmma::load_matrix_sync(f, p, ldm, wmma::mem_row_major)`` (accumulator) ->
  ``Call("__c2n_wmma_load", (f, p, ldm, IntLit(rows), IntLit(cols), IntLit(col_major)))``:
  element ``(r, c)`` is ``p[r * ldm + c]`` (row-major) or ``p[c * ldm + r]`` (column-major);
- ``wmma::store_matrix_sync(p, f, ldm, layout)`` -> ``Call("__c2n_wmma_store", (p, f, ldm,
  IntLit(rows), IntLit(cols), IntLit(col_major)))``;
- ``wmma::mma_sync(d, a, b, c)`` -> ``Call("__c2n_wmma_mma", (d, a, b, c, IntLit(M), IntLit(N),
  IntLit(K), IntLit(tf32)))``: ``d = a @ b + c``; products are exact and sums are accumulated in
  fp64 and rounded once to the accumulator's type (fp32 for half/bf16/tf32 inputs; int32 for
  8-bit integers, wrapping); tf32 inputs are first rounded to tf32 (10-bit mantissa);
- ``wmma::__float_to_tf32(x)`` -> ``Call("__c2n_float_to_tf32", (x,))`` (round to nearest, the
  result stored in a float).

Sub-byte (``experimental::precision``) fragments and ``bmma_sync`` are refused (C2N1017).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.ast import fast as N
from cuda2nki.frontend.cst import COMMENT_IDS, F
from cuda2nki.frontend.lowerbase import _text
from cuda2nki.frontend.typesys import INT, VOID, unqualified

if TYPE_CHECKING:
    from cuda2nki.frontend.lower import BodyLowerer

    _Base = BodyLowerer
else:
    _Base = object

WMMA_NAMESPACES = ("wmma", "nvcuda")
WMMA_FILL = "__c2n_wmma_fill"
WMMA_LOAD = "__c2n_wmma_load"
WMMA_STORE = "__c2n_wmma_store"
WMMA_MMA = "__c2n_wmma_mma"
FLOAT_TO_TF32 = "__c2n_float_to_tf32"
WMMA_CALLS = frozenset((WMMA_FILL, WMMA_LOAD, WMMA_STORE, WMMA_MMA))

_ROLES = ("matrix_a", "matrix_b", "accumulator")
_ELEMS = {
    "half": "float16",
    "__half": "float16",
    "__nv_bfloat16": "bfloat16",
    "nv_bfloat16": "bfloat16",
    "tf32": "float32",
    "float": "float32",
    "double": "float64",
    "signedchar": "int8",
    "char": "int8",
    "int8_t": "int8",
    "unsignedchar": "uint8",
    "uint8_t": "uint8",
    "int": "int32",
    "int32_t": "int32",
}


@dataclass(frozen=True)
class Fragment:
    """A fragment type: role, shape ``m x n x k``, element type, layout of a/b ("row"/"col")."""

    role: str
    m: int
    n: int
    k: int
    elem: A.ScalarType
    layout: str = ""
    tf32: bool = False

    @property
    def rows(self) -> int:
        return self.k if self.role == "matrix_b" else self.m

    @property
    def cols(self) -> int:
        return self.k if self.role == "matrix_a" else self.n

    @property
    def num_elements(self) -> int:
        return self.rows * self.cols // 32

    @property
    def array(self) -> A.ArrayType:
        return A.ArrayType(elem=self.elem, dims=(self.num_elements,))


def _template_args(type_node: ts.Node) -> list[ts.Node] | None:
    stack = [type_node]
    while stack:
        n = stack.pop()
        if n.type == "template_argument_list":
            return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]
        stack.extend(reversed(n.children))
    return None


def is_fragment_type(type_node: ts.Node) -> bool:
    """``[nvcuda::]wmma::fragment<...>`` (or ``fragment<...>`` under ``using namespace``)."""
    if type_node.type not in ("qualified_identifier", "template_type"):
        return False
    head = _text(type_node).replace(" ", "").split("<")[0].split("::")
    return head[-1] == "fragment" and (len(head) == 1 or head[-2] in WMMA_NAMESPACES)


class WmmaLowering(_Base):
    def fragment_of(self, type_node: ts.Node) -> Fragment:
        """The fragment a ``fragment<...>`` type names, else C2N1017."""
        args = _template_args(type_node)
        if args is None or len(args) not in (5, 6):
            raise self.fail("C2N1017", type_node, what=_text(type_node))
        role = _text(args[0]).replace(" ", "").split("::")[-1]
        if role not in _ROLES:
            raise self.fail("C2N1017", args[0], what=f"fragment role '{_text(args[0])}'")
        m, n, k = (self._fragment_dim(a) for a in args[1:4])
        elem_text = _text(args[4]).replace(" ", "")
        short = elem_text.split("::")[-1]
        if "experimental" in elem_text or short in ("u4", "s4", "b1"):
            raise self.fail("C2N1017", args[4], what=f"sub-byte fragment '{elem_text}'")
        name = _ELEMS.get(short)
        if name is not None:
            elem = A.ScalarType(name=name)
        else:
            t = self._template_arg(args[4])
            if not isinstance(t, A.ScalarType):
                raise self.fail("C2N1017", args[4], what=f"fragment of '{elem_text}'")
            elem = unqualified(t)
        layout = ""
        if len(args) == 6:
            lay = _text(args[5]).replace(" ", "").split("::")[-1]
            if lay not in ("row_major", "col_major"):
                raise self.fail("C2N1017", args[5], what=f"fragment layout '{_text(args[5])}'")
            layout = lay[:3]
        frag = Fragment(role, m, n, k, elem, layout, tf32=short == "tf32")
        if any(d % 32 for d in (m * k, k * n, m * n)) or min(m, n, k) <= 0:
            raise self.fail("C2N1017", type_node, what=f"fragment shape m{m}n{n}k{k}")
        return frag

    def _fragment_dim(self, node: ts.Node) -> int:
        target = node
        if node.type == "type_descriptor":  # `WMMA_M` reads as a type name
            t = node.child_by_field_id(F.type)
            target = t if t is not None else node
        text = _text(target).replace(" ", "")
        c = self.u.consts.get(text.lstrip(":"))
        if c is not None and isinstance(c[0], int):
            return c[0]
        if target.type in ("type_identifier", "identifier", "number_literal"):
            return self._const_from_text(text, target)
        v = self.const_int_node(target)
        if v is None:
            raise self.fail("C2N1017", node, what=f"fragment size '{_text(node)}'")
        return v

    def note_fragments(self, type_node: ts.Node, stmts: list[A.Stmt]) -> None:
        """Remember the fragment type of the variables a declaration of ``type_node`` declares."""
        frag = self.fragment_of(type_node)
        table = self.fragments
        for s in stmts:
            if isinstance(s, A.VarDecl):
                table[s.name] = frag

    def fragment_root(self, e: A.Expr) -> Fragment | None:
        """The fragment ``e`` is (a fragment variable, or an element of an array of them)."""
        while isinstance(e, A.Index):
            e = e.base
        if isinstance(e, A.Name):
            return self.fragments.get(e.name)
        return None

    def fragment_member(self, node: ts.Node, arg: ts.Node, field: str) -> A.Expr | None:
        """``f.x`` (the thread's elements) and ``f.num_elements``; None: not a fragment."""
        if field not in ("x", "num_elements"):
            return None
        root = arg
        while root.type == "subscript_expression":
            root = root.child_by_field_id(F.argument)
        if root is None or root.type != "identifier" or _text(root) not in self.fragments:
            return None
        base = self.expr(arg)
        frag = self.fragment_root(base)
        if frag is None:
            return None
        if field == "num_elements":
            return N.IntLit(loc=self.loc(node), value=frag.num_elements, ty=INT)
        return base

    def wmma_call(self, node: ts.Node, short: str, arg_nodes: list[ts.Node]) -> A.Expr:
        loc = self.loc(node)
        if short == "__float_to_tf32" and len(arg_nodes) == 1:
            x = self.expr(arg_nodes[0])
            return N.Call(loc=loc, func=FLOAT_TO_TF32, args=(x,), ty=A.ScalarType(name="float32"))
        lit = lambda v: N.IntLit(loc=loc, value=int(v), ty=INT)  # noqa: E731
        if short == "fill_fragment" and len(arg_nodes) == 2:
            f, _ = self._fragment_arg(arg_nodes[0])
            v = self.expr(arg_nodes[1])
            return N.Call(loc=loc, func=WMMA_FILL, args=(f, v), ty=VOID)
        if short == "load_matrix_sync" and len(arg_nodes) in (3, 4):
            f, frag = self._fragment_arg(arg_nodes[0])
            p, ldm = self.expr(arg_nodes[1]), self.expr(arg_nodes[2])
            col = self._layout(frag, arg_nodes[3] if len(arg_nodes) == 4 else None, node)
            return N.Call(
                loc=loc,
                func=WMMA_LOAD,
                args=(f, p, ldm, lit(frag.rows), lit(frag.cols), lit(col)),
                ty=VOID,
            )
        if short == "store_matrix_sync" and len(arg_nodes) == 4:
            f, frag = self._fragment_arg(arg_nodes[1])
            p, ldm = self.expr(arg_nodes[0]), self.expr(arg_nodes[2])
            col = self._layout(frag, arg_nodes[3], node)
            return N.Call(
                loc=loc,
                func=WMMA_STORE,
                args=(p, f, ldm, lit(frag.rows), lit(frag.cols), lit(col)),
                ty=VOID,
            )
        if short == "mma_sync" and len(arg_nodes) in (4, 5):
            (d, fd), (a, fa), (b, fb), (c, fc) = (self._fragment_arg(x) for x in arg_nodes[:4])
            roles = (fd.role, fa.role, fb.role, fc.role)
            if roles != ("accumulator", "matrix_a", "matrix_b", "accumulator") or not (
                (fa.m, fa.n, fa.k) == (fb.m, fb.n, fb.k) == (fc.m, fc.n, fc.k) == (fd.m, fd.n, fd.k)
            ):
                raise self.fail("C2N1017", node, what="mma_sync of mismatched fragments")
            return N.Call(
                loc=loc,
                func=WMMA_MMA,
                args=(d, a, b, c, lit(fa.m), lit(fa.n), lit(fa.k), lit(fa.tf32 or fb.tf32)),
                ty=VOID,
            )
        raise self.fail("C2N1017", node, what=f"wmma::{short}")

    def _fragment_arg(self, node: ts.Node) -> tuple[A.Expr, Fragment]:
        e = self.expr(node)
        frag = self.fragment_root(e)
        if frag is None:
            raise self.fail("C2N1017", node, what=f"'{_text(node)}' is not a fragment")
        return e, frag

    def _layout(self, frag: Fragment, layout: ts.Node | None, node: ts.Node) -> bool:
        """Column-major? From the fragment's type (a/b) or the ``mem_*_major`` argument."""
        if layout is None:
            if frag.role == "accumulator" or not frag.layout:
                raise self.fail("C2N1017", node, what="load_matrix_sync without a layout")
            return frag.layout == "col"
        word = _text(layout).replace(" ", "").split("::")[-1]
        if word in ("mem_row_major", "row_major"):
            return False
        if word in ("mem_col_major", "col_major"):
            return True
        got = self.const_int_node(layout)  # a layout held in a variable or a constant
        if got is None:
            raise self.fail("C2N1017", layout, what=f"layout '{_text(layout)}'")
        return bool(got)
