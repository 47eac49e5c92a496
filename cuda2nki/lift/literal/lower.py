"""CUDA AST -> literal program: the generic SIMT-vectorised lowering (issue 4 §2).

Choices (each one keeps the port a faithful, if slow, copy of the CUDA kernel):

* **Grid.** The current NKI API has no N-D launch grid, so the port loops over every block of the
  launch grid (``for by: for bx:``) and calls one per-block function; the grid extents are the
  binding's launch expressions, evaluated from the tensor shapes when the kernel is traced.
* **Threads.** The threads of a block are the elements of one (P, F) tile.  A 1-D block of B
  threads uses P = the largest divisor of B not above 128, F = B / P and thread ``tx = F*p + f``
  (consecutive threads are consecutive elements of a partition); a 2-D block (Bx, By <= 128) puts
  ``ty`` on the partition axis and ``tx`` on the free axis.  Both make threadIdx affine in the
  tile position, so an index affine in threadIdx, blockIdx, loop counters and scalars is a
  strided access pattern ``base + cp*p + cf*f`` on the flat tensor (one DMA per CUDA load/store).
  A kernel whose threads never meet and that names a thread only by its global index batches
  ``128 * F`` consecutive threads of the grid into one tile instead (:mod:`.batching`).
* **Values.** Uniform values are Python values at trace time; per-thread values are fp32 (int32
  for integers) tiles computed with elementwise ``nl`` ops; see :mod:`.values` and
  :mod:`.classify`.
* **Divergence.** A branch whose condition differs between threads evaluates both sides under
  masks; a local assigned under a mask becomes ``nl.where(mask, new, old)``; a store writes only
  where its mask holds (read-modify-write of the view); a return under a mask clears the threads
  from a ``live`` mask.  Uniform branches and loops stay Python control flow (specialised at
  trace time).  A loop whose trip count differs between threads but whose condition is affine in
  the thread runs until no thread satisfies it (decided at trace time, the values are indices,
  not data) with the condition as a mask.
* **Memory.** ``__shared__`` arrays become HBM scratch buffers accessed with the same strided DMA
  views: threads exchange values through memory as they do in CUDA.  ``__syncthreads`` needs no
  instruction: the tile program runs the threads of a block in lockstep, statement by statement,
  which is the order the SIMT interpreter defines.  Outputs start as zeros (the value the
  interpreter's buffers hold) or as a copy of their input (inout).  Several threads storing to one
  element write in thread order, so the last active thread wins, as in the interpreter.

* **Reads.** A read repeated with no write in between reuses the first tile, a read a loop
  does not change is loaded in front of it, and the reads of a counted loop that walk a row are
  loaded in runs of iterations (:mod:`.reuse`, :mod:`.runs`); a guarded store whose guard is an
  index condition writes without reading back in blocks whose threads all pass it.

* **Warps.** Shuffles go through an exchange buffer (write at the linear thread id, read the
  source lane's element; a lane or offset that differs between threads reads it with a gather,
  :mod:`.laneshuffle`); a kernel that computes with lanes gets one warp per partition.
* **Index arithmetic** that is not affine (``i / w``, ``max(r - 1, 0)``) is evaluated with NumPy
  when the kernel is traced (it depends on indices only) and its accesses are split into as few
  strided DMAs as the values allow.
* **Atomics** whose old value is unused apply every active thread's update in thread order
  (threads at one element combined first); ``atomicAdd``/``atomicSub`` on 32-bit integers
  whose old value is used give each thread the element plus the prefix sum of the increments
  of the threads before it (:mod:`.fetchadd`).
* **Addresses read from data.** An index or pointer offset that depends on data becomes an int32
  tile of flat element addresses (:class:`~.values.DynPtr` for a pointer).  A read is a gather:
  one indirect DMA per thread column (``vector_select`` with a per-partition row offset; legacy:
  an index tile on the partition dim of the flattened tensor).  ``atomicAdd``/``atomicSub`` there
  (histograms, scatter-adds) is one scatter read-modify-write DMA per column that accumulates
  repeated addresses (``nisa.dma_compute``; legacy ``nl.atomic_rmw``); the DMA engine adds in
  fp32, so integer totals are exact below 2**24.  Inactive threads and addresses outside the
  buffer move nothing in a gather (their rows are skipped, they read 0) and add the identity
  in a scatter; buffers must have fewer than 2**24 elements.
* **Integers** on the engines are fp32 arithmetic (exact below 2**24), so C's 32-bit
  ``+ - * / %``, ``>>`` (logical for unsigned, arithmetic for signed) and comparisons of
  per-thread integers are spelled with helpers that split values into 16-bit halves and bytes
  and reassemble them with bit operations: bit-exact, with C's wraparound (``/`` and ``%`` are
  restoring division, one compare-and-subtract per quotient bit).
  Integer tiles hold 32-bit patterns (unsigned loads and stores keep them; an unsigned value
  entering float arithmetic or a cast is converted as unsigned) and selects between them are
  bitwise.
* **64-bit integers** (buffers of ``long long``/``uint64_t``) are carried as pairs of 32-bit
  limbs and computed exactly with 32-bit operations (:mod:`.wide`).
* **Loops bounded by a counter.** A loop whose condition depends on data is ported when a
  conjunct ``c < K`` (``<=``, mirrored) bounds it: ``c`` starts at a literal, is stepped by one
  exactly once per iteration and ``K`` is uniform (:mod:`.bound`).  It runs that many
  iterations at trace time with a per-thread active mask that the condition clears.  A loop
  known at trace time that walks a per-thread index by one (a linear probe) reads the slots
  in runs, a thread whose index wrapped gathering its slot alone (:mod:`.proberun`).
* **Loops whose trip count depends on data** otherwise run on the device (``nl.while_loop``)
  while any thread is still in them, every thread under its own active mask; the per-thread
  locals they update live in tiles allocated in front of the loop (:mod:`.dataloop`).  One
  that walks a contiguous index range runs several iterations per pass, its reads at the index
  taken once per pass as runs of elements (:mod:`.datarun`).  The legacy API has no runtime
  loop: its ports of such loops are refused.

* **Loop exits.** ``break``/``continue`` under a per-thread condition are lowered again as
  per-thread flags that mask the threads that left (:mod:`.flow`); locals that reuse a name are
  given one name per declaration first when a lowering is refused (:mod:`.rename`).  A store
  through a pointer moved by index arithmetic that is not affine (an address tile, like data)
  stores at a trace-time snapshot of the addresses (:mod:`.knownaddr`), not as a scatter.
* **Local arrays** indexed by a per-thread value select each thread's element (reads) or
  update the element each thread names (writes), one compare per element (:mod:`.lanearray`).

* **Scatter stores.** A plain store at addresses read from data writes thread by thread in
  thread order (read the element, select, write it back: ``_c2n_scatter``).  Where several
  active threads store to one element CUDA leaves one of their values, unspecified which; the
  port leaves the last one in launch order (blocks in order, then thread ids), the outcome the
  SIMT interpreter's lockstep order gives, so that ``check`` compares it with that one legal
  outcome (a port that keeps another writer's value is reported as a mismatch).

* **Switches** whose cases fall through or break early are lowered again as flagged if-chains
  (:mod:`.switchloops`); a uniform loop condition with side effects is tested at the top of
  the body; a local that takes a value of a wider class than it was classified in (through a
  reference of an inlined function) is lowered again in that class.
* **Other atomics** whose old value is used or whose address depends on data (max, min, bit
  operations, exchange, compare-and-swap, wrapping increments, float totals) update the element
  thread by thread in that same order (:mod:`.serialatomic`).

Anything else is refused with C2N2301 naming the construct and its line: atomics on elements
other than 32-bit ones there, vectors
:mod:`.scalarise` cannot split into lanes, double precision, a uniform or index local, local
array or pointer that a loop whose trip count depends on data updates, 3-D blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.arith import ArithMixin
from cuda2nki.lift.literal.bindexpr import c_expr_to_py
from cuda2nki.lift.literal.calls import CallMixin
from cuda2nki.lift.literal.dataloop import DataLoopMixin
from cuda2nki.lift.literal.datarun import DataRunMixin
from cuda2nki.lift.literal.emit import EmitMixin
from cuda2nki.lift.literal.expressions import ExpressionMixin
from cuda2nki.lift.literal.loops import LoopMixin
from cuda2nki.lift.literal.memory import MemoryMixin
from cuda2nki.lift.literal.proberun import ProbeRunMixin
from cuda2nki.lift.literal.program import Instr, Node
from cuda2nki.lift.literal.spelling import dtype_spelling
from cuda2nki.lift.literal.state import (
    Binding_,
    LiteralRefusal,
    NotAffine,
    Scope,
)
from cuda2nki.lift.literal.statements import StatementMixin
from cuda2nki.lift.literal.values import (
    Lin,
    Uni,
    Value,
)
from cuda2nki.lift.literal.warps import WarpMixin
from cuda2nki.lift.literal.wide import WideMixin


@dataclass
class Lowerer(
    EmitMixin,
    StatementMixin,
    LoopMixin,
    DataLoopMixin,
    DataRunMixin,
    ProbeRunMixin,
    ExpressionMixin,
    MemoryMixin,
    ArithMixin,
    CallMixin,
    WarpMixin,
    WideMixin,
):
    tu: A.TranslationUnit
    fn: A.Function
    binding: object
    partitions: int
    free: int
    tx: Lin
    ty_: Lin
    tensors: dict[str, str]  # CUDA pointer parameter -> tensor variable of the port
    out: list[list[Node]] = field(default_factory=lambda: [[]])
    env: list[dict[str, Binding_]] = field(default_factory=lambda: [{}])
    names: set[str] = field(default_factory=set)
    counter: int = 0
    scratch: list[Instr] = field(default_factory=list)
    classes: dict[str, str] = field(default_factory=dict)
    live: bool = False
    # whether every early return cleared threads by a condition known at trace time, so that
    # ``_klive`` is exactly ``_live`` (else the known masks made from it are dropped at the end)
    live_exact: bool = True
    live_known: set[str] = field(default_factory=set)  # known masks made from ``_klive``
    dead: bool = False
    inline_depth: int = 0
    ret_slot: list[str | None] = field(default_factory=list)
    block_dims: tuple[int, int, int] = (1, 1, 1)
    entry_scope: list[Scope] = field(default_factory=list)
    entry_nest: list[int] = field(default_factory=list)  # len(out) where each inlining began
    known: dict[str, int] = field(default_factory=dict)  # spelled name -> known divisor
    # mask tile -> the trace-time boolean array it was made from (the exact active threads)
    exact: dict[str, str] = field(default_factory=dict)
    writes: dict[str, int] = field(default_factory=dict)
    reshape: dict[str, int] = field(default_factory=dict)
    # statements done since the innermost loop began, per block level (None: a loop boundary)
    trail: list[list[A.Stmt] | None] = field(default_factory=list)
    # locals known to hold index values that are not affine in the thread (class I at least)
    forced: dict[str, str] = field(default_factory=dict)
    # address tile -> the trace-time array of the same addresses, where they depend on indices
    # only (a snapshot taken when the address was formed; see :mod:`.knownaddr`)
    known_addr: dict[str, str] = field(default_factory=dict)
    snapshots: int = 0  # how many were taken (their own numbering: unused ones are dropped)
    callees: list[str] = field(default_factory=list)  # the functions being inlined, innermost last
    # a runtime loop's run loads -> their run tiles, and the iteration of the pass being
    # lowered (None: outside one, or in its step and condition); see :mod:`.datarun`
    run_tiles: dict = field(default_factory=dict)
    run_col: int | None = None
    run_addrs: set[str] = field(default_factory=set)  # address tiles made of run columns
    probe_reads: dict = field(default_factory=dict)  # reads -> their probe runs (.proberun)

    ret_value: Value = Uni("0", "int")
    #: blocks batched into wide tiles: threadIdx.x is the global index, blockIdx.x 0 (.batching)
    batched: bool = False


__all__ = ["LiteralRefusal", "Lowerer", "NotAffine", "c_expr_to_py", "dtype_spelling"]
