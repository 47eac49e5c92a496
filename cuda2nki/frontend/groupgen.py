"""Device functions generic over a cooperative group.

``__device__ int sum(cg::thread_group g, int* x, int v)`` and
``template <typename G> __device__ float warp_sum(G g, float v)`` take whichever group the caller
passes: a whole block (``this_thread_block()``) or a tile (``tiled_partition<16>(block)``).
Groups are erased (see :mod:`cuda2nki.frontend.ast`), so ``g.size()``, ``g.thread_rank()``,
``g.sync()`` and ``g.shfl_down(v, d)`` only mean something once the group is known.  Such a
function is therefore lowered once per group it is called with, as a template instance named
after the groups (``sum<tile16>``, ``warp_sum<tile32>``, ``sum<block>``), the group parameter
erased like any other group parameter.

The binding lives in the instance's template environment: a ``typename`` parameter maps to a
:class:`~cuda2nki.frontend.lowerbase.GroupArg`, a ``thread_group`` parameter is keyed by its
position (:func:`thread_group_key`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import tree_sitter as ts

from cuda2nki.frontend.cst import F
from cuda2nki.frontend.lowerbase import GroupArg, _text

if TYPE_CHECKING:
    from cuda2nki.frontend.unit import FuncDef

_GENERIC = "thread_group"


def thread_group_key(index: int) -> str:
    """The environment key of the ``thread_group`` parameter at position ``index``."""
    return f"#group{index}"


def _base_name(type_node: ts.Node) -> str:
    return _text(type_node).replace(" ", "").split("::")[-1].split("<")[0]


def param_index(p: ts.Node) -> int:
    """The position of parameter ``p`` among its function's parameters."""
    idx, sib = 0, p.prev_named_sibling
    while sib is not None:
        idx += sib.type.endswith("parameter_declaration")
        sib = sib.prev_named_sibling
    return idx


def bound_group(env: Mapping[str, object], p: ts.Node, t: ts.Node) -> GroupArg | None:
    """The group the environment binds to parameter ``p`` of type ``t``, else None."""
    if t.type == "type_identifier":
        g = env.get(_text(t))
        if isinstance(g, GroupArg):
            return g
    if _base_name(t) == _GENERIC:
        g = env.get(thread_group_key(param_index(p)))
        if isinstance(g, GroupArg):
            return g
    return None


def group_env(
    fd: FuncDef, pnodes: Sequence[ts.Node], groups: Sequence[tuple[str, int] | None]
) -> dict[str, GroupArg]:
    """The bindings a call with group arguments ``groups`` (per argument: the group's kind and
    tile size, None for a value) makes for ``fd``'s group-generic parameters."""
    tnames = {p[0] for p in fd.template_params if p[1] == "typename"}
    env: dict[str, GroupArg] = {}
    for i, (p, g) in enumerate(zip(pnodes, groups)):
        t = p.child_by_field_id(F.type)
        if g is None or t is None:
            continue
        if t.type == "type_identifier" and _text(t) in tnames:
            env[_text(t)] = GroupArg(g[0], g[1])
        elif _base_name(t) == _GENERIC:
            env[thread_group_key(i)] = GroupArg(g[0], g[1])
    return env


def is_group_bound(env: Mapping[str, object], p: ts.Node) -> bool:
    """Is parameter ``p`` a group parameter that ``env`` binds?"""
    t = p.child_by_field_id(F.type)
    return t is not None and bound_group(env, p, t) is not None


def generic_instance_name(name: str, env: Mapping[str, GroupArg]) -> str:
    """``sum<tile16>``: a non-template function specialised for the groups in ``env``."""
    return f"{name}<{', '.join(str(g) for g in env.values())}>"


def is_group_generic(fnode: ts.Node) -> bool:
    """Does the function defined at ``fnode`` take a ``thread_group`` (so that it is lowered per
    call site, never on its own)?"""
    for d in fnode.children:
        if d.type != "function_declarator":
            continue
        params = d.child_by_field_id(F.parameters)
        for p in params.named_children if params is not None else ():
            t = p.child_by_field_id(F.type)
            if t is not None and _base_name(t) == _GENERIC:
                return True
    return False
