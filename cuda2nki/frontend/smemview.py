"""Shared-memory view structs: typed access to the dynamic shared memory of a launch.

Templates cannot declare ``extern __shared__ T s[]`` for several ``T`` in one program, so CUDA
code wraps the declaration in a struct template whose member functions declare the array and
hand it out (the SDK's ``SharedMemory<T>``, in several spellings)::

    template <class T> struct SharedMemory {
        __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
    };
    template <> struct SharedMemory<float> {
        __device__ float *getPointer() { extern __shared__ float s_float[]; return s_float; }
    };
    #define BUILD(t, n) template <> struct SharedMemory<t> { \\
        __device__ t &operator[](int i) { extern __shared__ t n[]; return n[i]; } };

A struct is such a view when it has no data members and each member function it defines only
declares an ``extern __shared__`` array and returns it (cast, indexed by its parameter or
dereferenced); pure virtual declarations are allowed.  Every use means the launch's dynamic
shared memory seen as a ``T`` array: ``T* s = SharedMemory<T>();``, ``SharedMemory<T> smem;``
then ``smem.getPointer()``, ``smem[i]``, ``*smem`` or ``T* s = smem;``.  The front end lowers
them to an ``extern __shared__ T __c2n_smem_<T>[]`` array that it declares at the top of the
function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from cuda2nki.frontend.cst import F

_STRUCT_KINDS = ("struct_specifier", "class_specifier")
_BODY = re.compile(
    r"\{ ?extern __shared__ [\w:<> ]+? \*?(\w+) ?\[ ?\] ?; ?return "
    r"(?:\( ?[\w:<> ]+ ?\*? ?\) ?|(?:reinterpret|static)_cast ?< ?[\w:<> ]+ ?\*? ?> ?)?"
    r"\(? ?\*? ?\1 ?(?:\[ ?\w+ ?\])? ?\)? ?; ?\}"
)


@dataclass(frozen=True)
class SmemView:
    """A shared-memory view struct: its name and the names of its methods (``getPointer``)."""

    name: str
    methods: tuple[str, ...]


def _text(node: ts.Node | None) -> str:
    return node.text.decode() if node is not None and node.text is not None else ""


def _flat(text: str) -> str:
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"\s+", " ", text).strip()


def _method_name(fn: ts.Node) -> str | None:
    decl = fn.child_by_field_id(F.declarator)
    while decl is not None and decl.type in ("reference_declarator", "pointer_declarator"):
        decl = next((c for c in decl.named_children if c.type == "function_declarator"), None)
    if decl is None or decl.type != "function_declarator":
        return None
    name = decl.child_by_field_id(F.declarator)
    return _text(name) if name is not None and name.type == "field_identifier" else None


def smem_view_struct(node: ts.Node) -> SmemView | None:
    """The shared-memory view struct ``node`` defines, else None."""
    if node.type not in _STRUCT_KINDS:
        return None
    name_node, body = node.child_by_field_id(F.name), node.child_by_field_id(F.body)
    if name_node is None or body is None:
        return None
    methods: list[str] = []
    defined = 0
    for f in body.named_children:
        if f.type in ("access_specifier", "comment"):
            continue
        if f.type == "field_declaration":
            decl = f.child_by_field_id(F.declarator)
            if decl is None or "(" not in _text(decl):  # a data member
                return None
            continue
        if f.type != "function_definition":
            return None
        fbody = f.child_by_field_id(F.body)
        if fbody is None or not _BODY.fullmatch(_flat(_text(fbody))):
            return None
        defined += 1
        m = _method_name(f)
        if m is not None:
            methods.append(m)
    if not defined:
        return None
    return SmemView(_text(name_node).split("<")[0].strip(), tuple(methods))
