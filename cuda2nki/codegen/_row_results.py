"""Suppressions for the stores of a kernel whose only outputs are one result per row.

Where every output element is computed from a whole row of an input (a nearest centroid, a row
sum, a row maximum), the lowering holds that row on one partition and reduces it along the free
axis, so a row tile's results are one element per partition and each store moves one element
per partition row.  When these are the kernel's only stores, nothing wider amortises them and
``check`` may find the DMAs small (C2N5007).  Each such store carries a suppression whose reason
names the output, its element size and the row it is computed from, all taken from the kernel.

Placed only when (a) every ``Store`` of the kernel writes a one-column tile into a 1-D tensor,
and (b) the store's block loads a row tile of more than one column (the row that the result
reduces): a kernel with any wide store, or with results not computed from rows, gets none.
"""

from __future__ import annotations

from cuda2nki.codegen import suppress
from cuda2nki.dtypes import NUMPY_DTYPES
from cuda2nki.ir.nodes import Const, Kernel, Load, Loop, Note, Slice, Store, TensorDecl, View
from cuda2nki.ir.printer import to_text

#: what a one-result-per-row store makes unavoidable: narrow DMAs
ROW_RESULT_IDS = ("C2N5007",)


def mark_row_results(kernel: Kernel) -> Kernel:
    """``kernel`` with a suppression before each row-result store (see the module docstring)."""
    stores = list(_stores(kernel.body))
    if not stores or not all(_row_result(s) for s in stores):
        return kernel
    return kernel.replace(body=_block(kernel.body, kernel.tensors))


def _stores(body: tuple):
    for s in body:
        if isinstance(s, Loop):
            yield from _stores(s.body)
        elif isinstance(s, Store):
            yield s


def _row_result(s: Store) -> bool:
    """A one-column tile stored into a 1-D tensor: one element per partition row."""
    src = s.src.dims
    return (
        len(s.dst.dims) == 1
        and len(src) == 2
        and isinstance(src[1], Slice)
        and src[1].size == Const(1)
    )


def _block(body: tuple, decls: dict) -> tuple:
    rows = [s for s in body if isinstance(s, Load) and _row_tile(s.dst)]
    out: list = []
    for s in body:
        if isinstance(s, Loop):
            out.append(s.replace(body=_block(s.body, decls)))
            continue
        if isinstance(s, Store) and rows:
            out.append(_note(s, rows[0], decls))
        out.append(s)
    return tuple(out)


def _row_tile(tile: View) -> bool:
    """A 2-D tile of more than one column: a row of an input on each partition."""
    return len(tile.dims) == 2 and isinstance(tile.dims[1], Slice) and tile.dims[1].size != Const(1)


def _note(s: Store, row: Load, decls: dict) -> Note:
    out = decls.get(s.dst.tensor)
    dtype = out.dtype if isinstance(out, TensorDecl) else "float32"
    size = NUMPY_DTYPES[dtype].itemsize if dtype in NUMPY_DTYPES else 4
    reason = (
        f"one result per row: each {dtype} element of '{s.dst.tensor}' is computed from a row "
        f"of '{row.src.tensor}' ({_width(row, decls)} values) reduced on one partition, and "
        f"every output of the kernel is one such result per row, so each tile of up to 128 "
        f"rows stores {size} B per partition"
    )
    return suppress.note(ROW_RESULT_IDS, reason, s.loc)


def _width(row: Load, decls: dict) -> str:
    """The row's length: the input's last extent as bound (``nfeatures``), else the tile's."""
    src = decls.get(row.src.tensor)
    ext = src.shape[-1] if isinstance(src, TensorDecl) and src.shape else row.dst.dims[1].size
    return to_text(ext, locs=False)
