"""NKI simulator and hardware-constraint ids (C2N3000-3999).

Every id here is raised by :mod:`cuda2nki.nkisim` and points at the line of the NKI port that made
the offending call (the allocation for shape/rank/buffer/capacity problems, the instruction for
operand problems; reference NKI.md section 14.3).
"""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N3001",
        E,
        "API not supported by the simulator",
        "'{api}' is not supported by the simulator{detail}",
        "The port uses an NKI API, argument or mode that cuda2nki's simulator does not implement. "
        "Rather than guess, the simulator stops: a silent wrong answer would be worse.",
        example="nisa.nc_matmul_mx(dst, st, mv, st_scale, mv_scale)",
        fix="Use an equivalent supported API, or run the port on the Neuron SDK simulator.",
    ),
    Rule(
        "C2N3002",
        E,
        "partition dimension exceeds 128",
        "partition dimension of {what} is {size}, the hardware limit is 128",
        "SBUF and PSUM have 128 partitions; dimension 0 of an on-chip tile is the partition "
        "dimension and must be at most 128 (nl.tile_size.pmax).",
        example="t = nl.ndarray((256, 512), nl.float32, buffer=nl.sbuf)",
        fix="Tile the leading axis by 128 and loop over the tiles.",
    ),
    Rule(
        "C2N3003",
        E,
        "on-chip tensor below 2-D",
        "on-chip tensor {what} has shape {shape}; SBUF/PSUM tensors need at least 2 dimensions",
        "SBUF/PSUM tensors are (partition, free...) and must have at least two dimensions.",
        example="t = nl.ndarray((128,), nl.float32, buffer=nl.sbuf)",
        fix="Give the tile an explicit free dimension, e.g. (128, 1).",
    ),
    Rule(
        "C2N3004",
        E,
        "matmul contraction size invalid",
        "matmul contraction (partition) size {detail}",
        "TensorE contracts over the partition axis of both operands: stationary [K, M] and moving "
        "[K, N] must have the same K, and K is at most 128.",
        example="nisa.nc_matmul(dst, a_256xM, b_256xN)",
        fix="Tile K by 128 and accumulate the partial products in PSUM.",
    ),
    Rule(
        "C2N3005",
        E,
        "matmul stationary free size too large",
        "matmul stationary free size {size} exceeds {limit} on {target}",
        "The stationary (transposed left-hand) operand's free size is limited to 128 "
        "(nl.tile_size.gemm_stationary_fmax).",
        example="nisa.nc_matmul(dst, stationary=a_128x256, moving=b)",
        fix="Tile M by 128.",
    ),
    Rule(
        "C2N3006",
        E,
        "matmul moving free size too large",
        "matmul moving free size {size} exceeds {limit} on {target}",
        "The moving (right-hand) operand's free size is limited to 512 on trn1/trn2 "
        "(nl.tile_size.gemm_moving_fmax) and 4096 (fp32 out) / 8192 (bf16 out) on trn3.",
        example="nisa.nc_matmul(dst, a, moving=b_128x1024)",
        fix="Tile N by 512.",
    ),
    Rule(
        "C2N3007",
        E,
        "mixed fp32 and non-fp32 matmul inputs",
        "matmul inputs mix {a} and {b}: if one side is fp32/tfloat32 the other must be too",
        "TensorE runs fp32 matmuls in a different mode; it cannot combine an fp32/tf32 operand "
        "with a bf16/fp16/fp8 one.",
        example="nisa.nc_matmul(dst, a_fp32, b_bf16)",
        fix="Cast both operands to the same precision class (usually bf16) before the matmul.",
    ),
    Rule(
        "C2N3008",
        E,
        "PSUM tile larger than one bank",
        "PSUM tile {what} uses {size} bytes per partition; one PSUM bank holds 2048 on {target}",
        "On trn1/trn2 one PSUM tile (and a matmul result) must fit in one 2 KiB bank per partition "
        "(512 fp32). Use several tiles, or a leading block dimension, to use several banks.",
        example="acc = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)",
        fix="Split N into 512-wide tiles.",
    ),
    Rule(
        "C2N3009",
        E,
        "DMA reads PSUM",
        "{api} reads PSUM tensor {what}; DMA cannot read PSUM",
        "Since NKI 0.3.0 DMA engines cannot read PSUM: copy the result to SBUF first.",
        example="nisa.dma_copy(dst=out_hbm, src=acc_psum)",
        fix="nisa.tensor_copy(dst=sb, src=acc_psum) then DMA the SBUF tile.",
    ),
    Rule(
        "C2N3010",
        E,
        "GpSimd engine touches PSUM",
        "{api} runs on the GpSimd engine, which cannot access PSUM ({what})",
        "The GpSimd engine has no port to PSUM.",
        example="nisa.iota(psum_tile, ...)",
        fix="Use an SBUF tile, or a Vector/Scalar engine instruction.",
    ),
    Rule(
        "C2N3011",
        E,
        "kernel output not in shared HBM",
        "kernel returns {what} in {buffer}; kernel outputs must be allocated in nl.shared_hbm",
        "Outputs of a kernel must be created with buffer=nl.shared_hbm and returned.  A "
        "single-instance launch may also return private HBM (nl.hbm): that memory is per "
        "instance, so an SPMD grid or an LNC launch needs nl.shared_hbm.",
        example="out = nl.ndarray(shape, dtype, buffer=nl.sbuf); return out",
        fix="out = nl.ndarray(shape, dtype, buffer=nl.shared_hbm)",
    ),
    Rule(
        "C2N3012",
        E,
        "write to a kernel input",
        "{api} writes kernel input '{what}'; inputs are immutable",
        "Top-level kernel parameters are read-only (legacy error "
        "err_cannot_update_immutable_parameter); cuda2nki ports never update inputs in place.  "
        "A legacy kernel that returns nothing is an in/out kernel: it writes its results into "
        "its arguments, which is allowed.",
        example="nl.store(a[...], value=t)  # a is a parameter",
        fix="Allocate an output in nl.shared_hbm and return it.",
    ),
    Rule(
        "C2N3013",
        E,
        "invalid start partition",
        "{what} spans {size} partitions starting at partition {start}; {rule}",
        "An instruction operand covering P partitions must start at 0 if 64 < P <= 128, at 0 or 64 if "
        "32 < P <= 64, and at a multiple of 32 if P <= 32.",
        example="nisa.tensor_copy(dst=t[16:80, :], src=u[0:64, :])",
        fix="Align the partition range, or move the data with a DMA/shuffle first.",
    ),
    Rule(
        "C2N3014",
        E,
        "operand size mismatch",
        "{api}: {detail}",
        "Operands of elementwise instructions must span the same number of partitions and the same "
        "number of elements per partition.",
        example="nisa.tensor_tensor(dst=c_128x512, data1=a_128x512, data2=b_128x256, op=nl.add)",
        fix="Slice the operands to the same size.",
    ),
    Rule(
        "C2N3015",
        E,
        "reduction over the partition axis",
        "{api} reduces over axis {axis}; engines reduce only along free axes",
        "Vector/Scalar engines process partitions in parallel lanes; they cannot reduce along "
        "axis 0. Use a matmul with a ones vector, a transpose, or nisa.tensor_partition_reduce.",
        example="nl.sum(t, axis=0)",
        fix="Transpose first or use nisa.nc_matmul with a ones column.",
    ),
    Rule(
        "C2N3016",
        E,
        "dtype not allowed",
        "{api}: {detail}",
        "The instruction does not accept this data type for this operand.",
        example="nisa.memset(int_tile, 1.5)",
        fix="Use a supported dtype for the operand.",
    ),
    Rule(
        "C2N3017",
        E,
        "SBUF capacity exceeded",
        "live SBUF tensors need {size} bytes per partition, above the {limit} usable on {target}",
        "The SBUF tiles one instruction reads and writes must all be on chip at once; together "
        "they exceed the target's usable SBUF per partition, so no allocation can fit them (the "
        "location is the allocation of the newest of them), or one tile alone is larger than the "
        "SBUF (reported at its allocation). Other live tiles do not count here: "
        "the compiler can spill them (C2N3031).",
        example="big = nl.ndarray((128, 60000), nl.float32, buffer=nl.sbuf)",
        fix="Use smaller tiles, or split the instruction into smaller ones.",
    ),
    Rule(
        "C2N3018",
        E,
        "PSUM capacity exceeded",
        "live PSUM tiles need {banks} banks, the hardware has 8 (2 KiB each per partition)",
        "PSUM holds 16 KiB per partition in 8 banks; each PSUM tile occupies whole banks. The "
        "PSUM operands of one instruction must all fit at once.",
        example="nl.zeros((9, nl.par_dim(128), 512), nl.float32, buffer=nl.psum)  # legacy API",
        fix="Evacuate PSUM results to SBUF and reuse PSUM tiles.",
    ),
    Rule(
        "C2N3019",
        E,
        "index out of bounds",
        "index out of bounds: {detail}",
        "A slice, integer index or access pattern reaches outside the tensor.",
        example="t[0:200, :] on a (128, 512) tile",
        fix="Clip the slice (e.g. with min()) or mask the tail.",
    ),
    Rule(
        "C2N3020",
        E,
        "read of uninitialised memory",
        "{api} reads {what}, which has elements never written",
        "Fresh allocations hold garbage on hardware (the simulator poisons them with NaN/4). "
        "Raised only when uninitialised-read checking is enabled.",
        example="t = nl.ndarray((128, 4), nl.float32); nl.exp(t)",
        fix="Write the tile before reading it (memset, DMA, ...).",
    ),
    Rule(
        "C2N3021",
        E,
        "invalid NKI call",
        "{api}: {detail}",
        "A call does not satisfy the documented contract of the NKI API (wrong argument type, "
        "shape, enum value or missing argument).",
        example="nisa.tensor_tensor(dst, a, b)  # op missing",
        fix="See the NKI reference for the call's signature.",
    ),
    Rule(
        "C2N3022",
        E,
        "wrong memory for operand",
        "{api}: {what} is in {buffer}, expected {expected}",
        "Each instruction reads and writes specific memories: TensorE reads SBUF and writes PSUM, "
        "DMA moves between HBM and SBUF, compute engines work on SBUF/PSUM.",
        example="nisa.nc_matmul(dst=sbuf_tile, stationary=a, moving=b)",
        fix="Allocate the operand in the expected buffer.",
    ),
    Rule(
        "C2N3023",
        E,
        "kernel raised an exception",
        "the kernel raised {exc}",
        "The port's Python code raised an exception while the simulator ran it.",
        example="x = undefined_name",
        fix="Fix the port at the reported line.",
    ),
    Rule(
        "C2N3024",
        E,
        "cannot load kernel",
        "cannot load kernel from '{path}': {reason}",
        "The port file could not be imported, or it has no (or more than one) NKI kernel and none "
        "was named.",
        example="cuda2nki simulate port.py  # file defines two @nki.jit kernels",
        fix="Pass --kernel NAME.",
    ),
    Rule(
        "C2N3025",
        E,
        "bad kernel inputs",
        "kernel input '{name}': {reason}",
        "An input array is missing, has the wrong shape, or cannot be converted to its dtype.",
        example="cuda2nki simulate port.py  # parameter 'a' has no --shape and is not in --inputs",
        fix="Provide the array in --inputs or its shape with --shape a=128,512.",
    ),
    Rule(
        "C2N3026",
        E,
        "operand shapes do not match",
        "{api}: operand shapes {a} and {b} differ; {detail}",
        "In the current API the nki.language binary operations do not broadcast (NKI 0.3.0+ known "
        "issue): both operands must have the same shape (scalars are allowed).",
        example="nl.add(t_128x512, row_128x1)",
        fix="Use nisa.tensor_scalar with a (P, 1) operand, or nl.broadcast_to.",
    ),
    Rule(
        "C2N3027",
        W,
        "matmul accumulates onto unwritten PSUM",
        "nc_matmul(accumulate=True) adds onto PSUM elements of {what} never written",
        "Accumulating onto uninitialised PSUM is undefined behaviour on hardware.",
        example="acc = nl.ndarray(..., buffer=nl.psum); nisa.nc_matmul(acc, a, b, accumulate=True)",
        fix="Use accumulate=None/False for the first matmul, or memset the tile.",
    ),
    Rule(
        "C2N3028",
        W,
        "activation input outside its valid range",
        "{api}({op}) input reaches {value}, outside the valid range {range} of the hardware function",
        "Scalar-engine transcendental functions are approximations valid on a limited range "
        "(e.g. sin on [-pi, pi] without range reduction); outside it hardware results differ.",
        example="nisa.activation(dst, nl.sin, x_in_0_to_10)",
        fix="Reduce the argument range first (nl.sin does it).",
    ),
    Rule(
        "C2N3029",
        E,
        "invalid access pattern",
        "{api}: {detail}",
        "An access pattern (.ap) must have [stride, count] pairs; on SBUF/PSUM the first pair is "
        "[partition stride, partition count].",
        example="t.ap([[1, 128], [1, 64]])",
        fix="Write the pattern as [[free_elems_per_partition, P], [stride, count], ...].",
    ),
    Rule(
        "C2N3030",
        E,
        "affine_range iterations write the same location",
        "iterations {first} and {second} of nl.affine_range both write element(s) of {what}",
        "Iterations of a legacy nl.affine_range loop must be independent (legacy error "
        "err_unexpected_output_dependencies): two iterations may not write the same output "
        "location (accumulation with += into PSUM is the only loop-carried exception).",
        example="for i in nl.affine_range(4):\n    nl.store(out[0:128, :], value=t)",
        fix="Index the destination with the loop variable, or use nl.sequential_range.",
    ),
    Rule(
        "C2N3031",
        N,
        "on-chip capacity exceeded: the compiler spills",
        "live {buffer} tiles need {size} {unit} here (at the peak {peak}), above the {limit} on "
        "{target}; the compiler would spill {spilled} bytes per partition to HBM and back (about "
        "{cost} us of DMA)",
        "Occupancy is counted from each tile's allocation to its last use. Above capacity, tiles "
        "not used by the instruction at hand can be spilled to HBM and reloaded before their next "
        "use; the estimate moves each stretch's largest excess out and back on all 16 DMA "
        "engines. The location is the first instruction over capacity.",
        example="tiles written in a loop and all read again after it, more than fit at once",
        fix="Consume each tile before producing the next, or use smaller tiles.",
    ),
)
