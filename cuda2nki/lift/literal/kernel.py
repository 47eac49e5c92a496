"""The kernel around the per-block program: signature, sizes, outputs, the grid loop.

* Tensor parameters are the CUDA pointer parameters with role ``in``/``inout`` (binding order);
  scalar sizes that are a whole dimension of an input tensor come from its shape, other scalars
  are keyword parameters with the binding's default.
* Outputs (``out``/``inout``) are allocated in shared HBM; an ``inout`` output starts as a copy
  of its input and every CUDA access to that pointer goes to the output.
* The block size must be a constant of the binding (it fixes the tile layout); the grid is the
  binding's launch expression evaluated when the kernel is traced.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.batching import (
    batch_width,
    data_addressed,
    masked_body,
    needs_mask,
)
from cuda2nki.lift.literal.bindexpr import c_expr_to_py
from cuda2nki.lift.literal.classify import ORDER
from cuda2nki.lift.literal.flow import EXIT_REFUSALS, flag_exits
from cuda2nki.lift.literal.helpers import _py
from cuda2nki.lift.literal.lower import Lowerer
from cuda2nki.lift.literal.program import Instr, LiteralProgram, Loop, Node
from cuda2nki.lift.literal.ptroffsets import offset_pointers
from cuda2nki.lift.literal.ptrselect import POINTER_VALUE, select_pointers
from cuda2nki.lift.literal.rename import redeclares, unshadow
from cuda2nki.lift.literal.spelling import dtype_spelling
from cuda2nki.lift.literal.state import LiteralRefusal, NotAffine
from cuda2nki.lift.literal.switchloops import SWITCH_REFUSALS, switches_as_loops
from cuda2nki.lift.literal.values import Lin
from cuda2nki.lift.literal.wide import limb_output

MAX_PARTITIONS = 128


def layout(
    block: tuple[int, int, int], loc: object, warps: bool = False, modulus: int = 0
) -> tuple[int, int, Lin, Lin, str]:
    """(P, F, threadIdx.x, threadIdx.y, description) for a block shape (see lower.py).

    A kernel that computes with warp lanes (shuffles, ``tid % 32``, ``tid / 32``...) puts one
    warp per partition (F = 32), so that lane and warp index stay affine in the tile position."""
    bx, by, bz = block
    if bz != 1:
        raise LiteralRefusal("a 3-D thread block", loc)
    if warps and by == 1 and bx % 32 == 0 and bx // 32 <= MAX_PARTITIONS:
        return bx // 32, 32, Lin("0", "32", "1"), Lin("0", "0", "0"), "one warp per partition"
    if by == 1 and modulus and bx % modulus == 0 and bx // modulus <= MAX_PARTITIONS:
        f = modulus
        return (
            bx // f,
            f,
            Lin("0", str(f), "1"),
            Lin("0", "0", "0"),
            f"thread x = {f}*partition + free",
        )
    if by == 1:
        p = max(d for d in range(1, min(bx, MAX_PARTITIONS) + 1) if bx % d == 0)
        f = bx // p
        tx = Lin("0", str(f), "1") if p > 1 else Lin("0", "0", "1")
        if f == 1:
            tx = Lin("0", "1", "0")
        desc = f"thread x = {f}*partition + free" if f > 1 else "thread x = partition"
        return p, f, tx, Lin("0", "0", "0"), desc
    if by > MAX_PARTITIONS:  # a tall block: its columns on partitions, its rows free
        return (
            bx,
            by,
            Lin("0", "1", "0"),
            Lin("0", "0", "1"),
            "thread x = partition, thread y = free index",
        )
    tx = Lin("0", "0", "1") if bx > 1 else Lin("0", "0", "0")
    return by, bx, tx, Lin("0", "1", "0"), "thread y = partition, thread x = free index"


def uses_warp_lanes(tu: A.TranslationUnit, fn: A.Function) -> bool:
    """Whether the kernel (or a device function it calls) works with warp lanes."""
    seen: set[str] = set()

    def walk(x: object) -> bool:
        if isinstance(x, A.Call):
            if x.func.startswith(
                (
                    "__shfl",
                    "__c2n_warp",
                    "__c2n_cub",
                    "__ballot",
                    "__any",
                    "__all",
                    "__activemask",
                    "__lanemask",
                )  # fmt: skip
            ):
                return True
            if x.target and x.target not in seen:
                seen.add(x.target)
                callee = tu.function(x.target)
                if callee is not None and walk(callee.body):
                    return True
        if isinstance(x, A.Builtin) and x.name == "warpSize":
            return True
        if isinstance(x, A.Binary) and isinstance(x.right, A.IntLit):
            if (x.op, x.right.value) in (("/", 32), ("%", 32), (">>", 5), ("&", 31)):
                return True
        if isinstance(x, A.Node):
            for name in x.__dataclass_fields__:
                v = getattr(x, name)
                for item in v if isinstance(v, tuple) else (v,):
                    if isinstance(item, A.Node) and walk(item):
                        return True
        return False

    return walk(fn.body)


def thread_modulus(fn: A.Function, bx: int) -> int:
    """The largest K with ``threadIdx.x / K`` or ``threadIdx.x % K`` in the kernel (K | bx)."""
    found: list[int] = []

    def has_tid(x: object) -> bool:
        if isinstance(x, A.Builtin):
            return x.name == "threadIdx" and x.dim == "x"
        if isinstance(x, A.Node):
            for name in x.__dataclass_fields__:
                v = getattr(x, name)
                for item in v if isinstance(v, tuple) else (v,):
                    if isinstance(item, A.Node) and has_tid(item):
                        return True
        return False

    def walk(x: object) -> None:
        if isinstance(x, A.Binary) and isinstance(x.right, A.IntLit) and has_tid(x.left):
            k = x.right.value
            if x.op in ("/", "%") and k > 1:
                found.append(k)
            elif x.op == ">>" and 0 < k < 16:
                found.append(1 << k)
            elif x.op == "&" and k > 0 and (k + 1) & k == 0:
                found.append(k + 1)
        if isinstance(x, A.Node):
            for name in x.__dataclass_fields__:
                v = getattr(x, name)
                for item in v if isinstance(v, tuple) else (v,):
                    if isinstance(item, A.Node):
                        walk(item)

    walk(fn.body)
    ok = [k for k in found if bx % k == 0 and bx // k <= MAX_PARTITIONS]
    return max(ok, default=0)


def _block_dims(binding: object, loc: object) -> tuple[int, int, int]:
    dims = []
    for d in tuple(binding.block) + (1,) * (3 - len(binding.block)):  # type: ignore[attr-defined]
        if isinstance(d, int) or str(d).strip().isdigit():
            dims.append(int(d))
            continue
        try:
            from cuda2nki.binding import eval_c_expr

            dims.append(int(eval_c_expr(d, {})))
        except Exception:  # noqa: BLE001 - not a constant
            raise LiteralRefusal(f"a block size that depends on parameters ({d})", loc) from None
    return dims[0], dims[1], dims[2]


def _layout_of(tu, fn, block: tuple, batch: int) -> tuple[int, int, Lin, Lin, str]:  # noqa: ANN001
    if not batch:
        return layout(block, fn.loc, uses_warp_lanes(tu, fn), thread_modulus(fn, block[0]))
    p = MAX_PARTITIONS  # consecutive threads of the whole grid per tile (see .batching)
    tx = Lin(f"_bx * {p * batch}", str(batch), "1")
    desc = (
        f"{p * batch} consecutive threads of the grid per tile, thread = {batch}*partition + free"
    )
    return p, batch, tx, Lin("0", "0", "0"), desc


def _lower(tu, fn, binding, block: tuple, access: dict, batch: int):  # noqa: ANN001, ANN202
    """The per-block program of ``fn`` (``batch``: threads per partition of a batched tile, 0
    for one CUDA block per tile): (lowerer, body, P, F, layout description)."""
    p, f, tx, ty, desc = _layout_of(tu, fn, block, batch)
    tensors = binding.tensors
    forced: dict[str, str] = {}
    flagged = renamed = switched = chosen = False
    fn, tu = _looped_offsets(fn), _looped_offsets_tu(tu)
    while True:
        low = Lowerer(tu, fn, binding, p, f, tx, ty, access, block_dims=block, forced=dict(forced),
                      batched=bool(batch))  # fmt: skip
        for t in tensors:
            low.names.add(access[t.name])
            low.names.add(_py(t.name))
        for s in binding.scalars:
            low.names.add(_py(s.name))
        try:
            return low, low.lower_body(), p, f, desc
        except NotAffine as exc:  # that local holds values of a wider class: lower it as one
            if ORDER[forced.get(exc.local, "U")] >= ORDER[exc.klass]:
                raise
            forced[exc.local] = exc.klass  # (I: an index local, evaluated when traced; T: a tile)
        except LiteralRefusal as exc:
            if not renamed and redeclares(fn):  # again, one name per declaration
                fn, renamed, forced = unshadow(fn), True, {}
            elif exc.construct in EXIT_REFUSALS and not flagged:  # loop exits as flags
                fn, tu, flagged = _exits_as_flags(fn), _exits_as_flags_tu(tu), True
            elif exc.construct == POINTER_VALUE and not chosen:  # chosen per access
                fn, tu, chosen = _pointers_per_access(fn), _pointers_per_access_tu(tu), True
            elif exc.construct in SWITCH_REFUSALS and not switched:  # as flagged if-chains
                fn, tu, switched = _switches_as_loops(fn), _switches_as_loops_tu(tu), True
            else:
                raise


def _batched(tu, fn, binding, block: tuple, grid: tuple, access: dict):  # noqa: ANN001, ANN202
    """The batched lowering (see .batching), or None where blocks stay one per tile: not
    batchable, or batches that pass the launch's last thread doing data-addressed work."""
    batch = batch_width(tu, fn, block, grid)
    if not batch:
        return None
    masked = needs_mask(block, grid, batch)
    try:
        got = _lower(tu, masked_body(fn) if masked else fn, binding, block, access, batch)
    except (LiteralRefusal, NotAffine):
        return None
    if masked and data_addressed(got[1]):
        return None
    return got


def build(tu: A.TranslationUnit, fn: A.Function, binding: object, name: str) -> LiteralProgram:
    block = _block_dims(binding, fn.loc)
    grid = tuple(binding.grid) + (1,) * (3 - len(binding.grid))  # type: ignore[attr-defined]
    tensors = binding.tensors  # type: ignore[attr-defined]
    for t in tensors:
        if t.dtype == "float64":
            raise LiteralRefusal(
                f"a {t.dtype} tensor '{t.name}' (no 64-bit NKI arithmetic)", fn.loc
            )
    access = {t.name: (_py(t.name) + "_io" if t.role == "inout" else _py(t.name)) for t in tensors}
    got = _batched(tu, fn, binding, block, grid, access)
    batch = got is not None
    low, body, p, f, desc = got or _lower(tu, fn, binding, block, access, 0)

    inputs = [t for t in tensors if t.role in ("in", "inout")]
    sizes: dict[str, str] = {}
    for t in inputs:
        for d, ext in enumerate(t.shape):
            if isinstance(ext, str) and ext.isidentifier() and ext not in sizes:
                sizes[ext] = f"{_py(t.name)}.shape[{d}]"
    scalar_names = [s.name for s in binding.scalars]  # type: ignore[attr-defined]
    kinds = {p_.name: p_.ty for p_ in fn.params}
    keywords = [
        f"{_py(s.name)}={s.value!r}"
        for s in binding.scalars  # type: ignore[attr-defined]
        if s.name not in sizes
    ]
    params = tuple([_py(t.name) for t in inputs] + keywords)
    pro: list[Node] = []
    for s in scalar_names:
        if s in sizes:
            pro.append(Instr("let", (("dst", _py(s)), ("value", sizes[s]))))
        ty = kinds.get(s)
        if isinstance(ty, A.ScalarType) and ty.is_float:
            pro.append(Instr("let", (("dst", _py(s)), ("value", f"np.float32({_py(s)})"))))
        elif isinstance(ty, A.ScalarType):
            pro.append(Instr("let", (("dst", _py(s)), ("value", f"int({_py(s)})"))))
    outs = [t for t in tensors if t.role in ("out", "inout")]
    for t in outs:
        shape = ", ".join(c_expr_to_py(str(d)) for d in t.shape) + (
            "," if len(t.shape) == 1 else ""
        )
        shape, dtype = limb_output(t.dtype, shape) or (shape, dtype_spelling(t.dtype))
        dst = access[t.name]
        pro.append(Instr("output", (("dst", dst), ("shape", f"({shape})"),
                                    ("dtype", dtype))))  # fmt: skip
        src = _py(t.name) if t.role == "inout" else "None"
        pro.append(Instr("fill", (("dst", dst), ("src", src))))
    for axis, g in zip("xyz", grid):
        pro.append(Instr("let", (("dst", f"_g{axis}"), ("value", c_expr_to_py(str(g))))))
    for axis, b in zip("xyz", block):
        pro.append(Instr("let", (("dst", f"_bd{axis}"), ("value", str(b)))))
    pro.extend(low.scratch)
    # a scalar parameter the kernel assigns is each block's own copy, from the caller's value
    own = "".join(f", {_py(n)}={_py(n)}" for n in scalar_names if n in assigned_names(fn))
    blk = Loop("def", f"_c2n_block(_bx, _by, _bz{own})",
               tuple(body) or (Instr("ret", (("value", "None"),)),), fn.loc.line)  # fmt: skip
    call = Instr("call", (("expr", "_c2n_block(_bx, _by, _bz)"),))
    batches = f"_c2n_ceil_div(_gx * _bdx, {p * f})" if batch else "_gx"
    loops: Node = Loop("for", f"_bx in range({batches})", (call,))
    loops = Loop("for", "_by in range(_gy)", (loops,))
    loops = Loop("for", "_bz in range(_gz)", (loops,))
    ret = ", ".join(access[t.name] for t in outs) or "None"
    tail = (loops, Instr("ret", (("value", ret),)))
    return LiteralProgram(
        name=name,
        params=params,
        partitions=p,
        free=f,
        layout=desc,
        body=(*pro, blk, *tail),
        batched=p * f if batch else 0,
    )


def _exits_as_flags(fn: A.Function) -> A.Function:
    """The kernel with its loops' per-thread ``break``/``continue`` stated as flags."""
    return dataclasses.replace(fn, body=flag_exits(fn.body))


def _exits_as_flags_tu(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with the same rewriting in every function (the device functions inlined), each
    function's flags named apart."""
    funcs = tuple(
        dataclasses.replace(f, body=flag_exits(f.body, f"{f.name}_")) for f in tu.functions
    )
    return dataclasses.replace(tu, functions=funcs)


def _looped_offsets(fn: A.Function) -> A.Function:
    """The kernel with its pointers moved inside loops held as offsets (.ptroffsets)."""
    return offset_pointers(fn, looped=True)


def _looped_offsets_tu(tu: A.TranslationUnit) -> A.TranslationUnit:
    funcs = tuple(offset_pointers(f, looped=True) for f in tu.functions)
    return dataclasses.replace(tu, functions=funcs)


def _pointers_per_access(fn: A.Function) -> A.Function:
    """The kernel with its only-moved pointers held as offsets and its condition-chosen
    pointer locals chosen at each access."""
    return select_pointers(offset_pointers(fn))


def _pointers_per_access_tu(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with the same rewriting in every function, each function's flags named apart."""
    funcs = tuple(select_pointers(offset_pointers(f), f"{f.name}_") for f in tu.functions)
    return dataclasses.replace(tu, functions=funcs)


def _switches_as_loops(fn: A.Function) -> A.Function:
    """The kernel with its switches that fall through or break early as flagged if-chains."""
    return dataclasses.replace(fn, body=switches_as_loops(fn.body))


def _switches_as_loops_tu(tu: A.TranslationUnit) -> A.TranslationUnit:
    """``tu`` with the same rewriting in every function (the device functions inlined)."""
    funcs = tuple(dataclasses.replace(f, body=switches_as_loops(f.body)) for f in tu.functions)
    return dataclasses.replace(tu, functions=funcs)


def assigned_names(fn: A.Function) -> set[str]:
    """Names the kernel's body assigns (``=``, compound assignments, ``++`` / ``--``)."""
    from cuda2nki.frontend.visit import walk

    out = set()
    for n in walk(fn.body):
        if isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            out.add(n.target.name)
        elif isinstance(n, A.Unary) and n.op in ("pre++", "pre--", "post++", "post--"):
            if isinstance(n.operand, A.Name):
                out.add(n.operand.name)
    return out
