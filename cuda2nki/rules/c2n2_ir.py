"""C2N2400-2499: tile IR text and verifier findings (``cuda2nki.ir``)."""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N2400",
        E,
        "malformed tile IR text",
        "cannot parse tile IR: {reason}",
        "The textual tile IR (as printed by `cuda2nki port --emit intent|tiles`) does not follow "
        "the grammar `cuda2nki/grammars/tile_ir.lark`, or names an unknown op, statement or operand.",
        example="map: c[i] = a[i] +  for i < N;",
        fix="Correct the text at the reported position; print a known-good kernel for the syntax.",
    ),
)

_EVAL = (
    "Raised by the tile IR evaluator (`cuda2nki.ir.evaluate`) or verifier (`cuda2nki.ir.verify`)."
)

register(
    Rule(
        "C2N2401",
        E,
        "missing value for the IR evaluator",
        "no value given for {what}",
        _EVAL + " Every input tensor and every scalar parameter that is not implied by an input "
        "shape needs a value.",
        example="evaluate(kernel, {'a': a})  # 'b' missing",
        fix="Pass the named input or scalar (binding `[scalars]` or the `scalars=` argument).",
    ),
    Rule(
        "C2N2402",
        E,
        "input shape does not match the IR",
        "tensor '{name}' has shape {got}, the IR declares {expected}",
        _EVAL + " The shape of an input array must equal its declared (symbolic) shape evaluated "
        "with the scalar parameters.",
        example="a: in float32[N] with N = 100, given an array of shape (128,)",
        fix="Pass arrays of the declared shape, or correct the scalar sizes.",
    ),
    Rule(
        "C2N2403",
        E,
        "index out of bounds in the IR",
        "out-of-bounds index in {what}",
        _EVAL + " An index evaluated outside its tensor at a point where the value is used (not "
        "masked by the domain guard, a select or a reduction's where).",
        example="map: y[i] = x[i + 1] for i < N;",
        fix="Guard the access (`where index(i) + 1 < N`) or shrink the domain.",
    ),
    Rule(
        "C2N2404",
        E,
        "scheduled IR given to the intent evaluator",
        "cannot evaluate a '{what}' statement: the evaluator runs the intent layer",
        _EVAL
        + " The evaluator executes Compute statements; scheduled tiles are executed by the NKI "
        "simulator after code generation.",
        example="evaluate(scheduled_kernel, inputs)",
        fix="Evaluate the intent kernel (before the passes).",
    ),
    Rule(
        "C2N2405",
        E,
        "unknown tensor in the IR",
        "tensor '{name}' is not declared",
        _EVAL + " A Read, Access or View names a tensor that is neither a parameter nor a "
        "temporary (intent) nor an allocated tile (scheduled).",
        example="map: y[i] = z[i] for i < N;  # no tensor z",
        fix="Declare the tensor (`temp z: float32[N];`) or fix the name.",
    ),
    Rule(
        "C2N2406",
        E,
        "rank mismatch in the IR",
        "tensor '{name}' has rank {rank} but is indexed with {got} indices",
        _EVAL + " Every read and write gives exactly one index per dimension.",
        example="map: y[i] = x[i] for i < N;  # x: float32[M, N]",
        fix="Index every dimension.",
    ),
    Rule(
        "C2N2407",
        E,
        "division by zero in an IR size",
        "size expression '{expr}' divides by zero",
        _EVAL + " A size, extent or index expression divides by a value that evaluates to zero.",
        example="x: in float32[N // B] with B = 0",
        fix="Check the scalar parameters.",
    ),
    Rule(
        "C2N2408",
        E,
        "operator cannot combine",
        "'{op}' cannot be used to reduce, scan or accumulate",
        _EVAL + " Reductions, scans and accumulating writes need an associative operator with an "
        "identity: add, mul, max, min, land, lor, bitand, bitor, bitxor.",
        example="reduce(sub, k < K: x[k])",
        fix="Use an associative operator (rewrite sub as add of a negation).",
    ),
    Rule(
        "C2N2409",
        E,
        "scan axis is not a domain axis",
        "scan axis '{axis}' is not an axis of the statement's domain",
        _EVAL + " A scan runs along one of its statement's domain axes (kind scan).",
        example="map: y[i] = scan(add, j: x[i]) for i < N;",
        fix="Add the axis to the domain as `scan j < N`.",
    ),
    Rule(
        "C2N2410",
        E,
        "data-dependent extent",
        "the extent of axis '{axis}' depends on tensor data",
        _EVAL + " Axis extents may depend on scalar parameters and outer axes, not on data.",
        example="reduce(add, k < $(len[i]): x[i, k])",
        fix="Reduce over the full extent with `where index(k) < len[i]`.",
    ),
)

_VER = (
    "Reported by the tile IR verifier (`cuda2nki.ir.verify`), which runs after every pass in tests."
)
_HW = (
    _VER
    + " The scheduled layer maps one-to-one onto NKI, so NKI's hardware limits apply (reference/NKI.md §3)."
)

register(
    Rule(
        "C2N2411",
        E,
        "undefined symbol in the IR",
        "'{name}' is not a scalar parameter or an axis/loop variable in scope",
        _VER
        + " Sizes and indices may use scalar parameters, the axes of the enclosing domain or reduction, and enclosing loop variables.",
        example="map: y[i] = x[j] for i < N;",
        fix="Use a variable in scope or declare the scalar parameter.",
    ),
    Rule(
        "C2N2412",
        E,
        "duplicate name in the IR",
        "'{name}' is declared more than once in one scope",
        _VER
        + " Tensor, tile, scalar, axis and loop-variable names must be unique where they are visible.",
        example="kernel k(x: in float32[N], x: out float32[N], N: int32) {}",
        fix="Rename one of them.",
    ),
    Rule(
        "C2N2413",
        E,
        "unknown dtype in the IR",
        "unknown dtype '{dtype}'",
        _VER
        + " Dtypes are NumPy-style names: bool, int8..uint64, float8_e4m3, float8_e5m2, bfloat16, float16, tfloat32, float32, float64.",
        example="temp t: half[N];",
        fix="Use the canonical name (float16).",
    ),
    Rule(
        "C2N2414",
        E,
        "data-dependent shape",
        "the shape of '{name}' depends on tensor data",
        _VER + " Shapes are symbolic in scalar parameters only.",
        example="temp t: float32[$(n[0])];",
        fix="Use a scalar parameter bound by the caller.",
    ),
    Rule(
        "C2N2415",
        E,
        "axis kind misused",
        "axis '{axis}' of kind {kind} cannot be used {where}",
        _VER
        + " Domain axes are parallel or scan; reduction axes are bound by the reduce that sums over them.",
        example="map: y[i] = x[i] for reduction i < N;",
        fix="Move the axis into a reduce(...) or make it parallel.",
    ),
    Rule(
        "C2N2416",
        E,
        "reduction without axes",
        "a reduction needs at least one axis",
        _VER,
        example="reduce(add, : x[i])",
        fix="Name the reduced axis.",
    ),
    Rule(
        "C2N2417",
        E,
        "operator arity",
        "'{op}' takes {arity} operand(s), used with {got}",
        _VER,
        example="Unary(Op.ADD, x)",
        fix="Use a unary op in Unary and a binary op in Binary.",
    ),
    Rule(
        "C2N2418",
        E,
        "write to an input",
        "'{name}' is an input (role in) and cannot be written",
        _VER
        + " A tensor the kernel writes must have role out or inout (ruling: a port never updates inputs in place).",
        example="map: x[i] = 0.0 for i < N;  # x: in",
        fix="Declare the tensor inout, or write to an output.",
    ),
    Rule(
        "C2N2419",
        E,
        "operation on the wrong kind of value",
        "'{op}' cannot be applied to a {dtype} value",
        _VER + " Bitwise operators need integers; indices and sizes need integer scalars.",
        example="map: y[i] = x[i] & 1 for i < N;  # x: float32",
        fix="Cast to an integer type first.",
    ),
    Rule(
        "C2N2420",
        W,
        "output never written",
        "output '{name}' is never written",
        _VER + " An output the kernel never writes keeps whatever its buffer held.",
        example="kernel k(y: out float32[N], N: int32) {}",
        fix="Write the output, or drop it from the parameters.",
    ),
    Rule(
        "C2N2421",
        E,
        "reduction axis used outside its reduction",
        "reduction axis '{name}' is used outside the reduce that binds it",
        _VER
        + " A reduction axis exists only inside its reduce(...): the target index, the domain guard and the rest of the expression cannot refer to it.",
        example="reduce: y[i, k] = reduce(add, k < K: x[i, k]) for i < N;",
        fix="Index the target with domain axes only.",
    ),
    Rule(
        "C2N2422",
        W,
        "several points write one element",
        "domain axis '{axis}' does not index the target '{name}': several points write the same element",
        _VER
        + " Without accumulate, each target element should be written by exactly one point of the domain; otherwise the result depends on the order of writes.",
        example="map: y[i] = x[i, j] for i < N, j < M;",
        fix="Use reduce(...) over the axis, or accumulate (y[i] add= ...).",
    ),
    Rule(
        "C2N2423",
        E,
        "role misused",
        "tensor '{name}' has role {role} where it is declared",
        _VER + " Parameters are in/out/inout; temporaries have role temp.",
        example="temp t: out float32[N];",
        fix="Use role temp for temporaries and in/out/inout for parameters.",
    ),
    Rule(
        "C2N2424",
        W,
        "temporary read before it is written",
        "temporary '{name}' is read before any statement writes it",
        _VER
        + " Statements run in order; a temporary read before its first write holds zeros in the"
        " evaluator and garbage on hardware.",
        example="temp m: float32[R];\nmap: y[i] = m[i] for i < R;",
        fix="Order the statements so the temporary is computed first.",
    ),
    Rule(
        "C2N2430",
        E,
        "partition dimension exceeds 128",
        "'{name}' uses {size} partitions (at most {limit})",
        _HW + " The first dimension of every SBUF/PSUM tile is the partition dimension.",
        example="alloc t: float32[256, 512] sbuf;",
        fix="Tile the dimension in blocks of 128 (loop over tiles).",
    ),
    Rule(
        "C2N2431",
        E,
        "PSUM tile exceeds one bank",
        "PSUM tile '{name}' needs {bytes} bytes per partition (at most {limit})",
        _HW
        + " A PSUM tile holds at most one 2 KiB bank per partition (512 float32) on trn1/trn2 (ruling §14.2).",
        example="alloc acc: float32[128, 1024] psum;",
        fix="Split the free dimension into tiles of 512 float32.",
    ),
    Rule(
        "C2N2432",
        E,
        "matmul constraint violated",
        "matmul: {what}",
        _HW
        + " nc_matmul: dst in PSUM, stationary [K, M] and moving [K, N] in SBUF, K <= 128, M <= 128, N <= 512.",
        example="matmul(dst=p[...], stationary=a[ds(0, 256), ds(0, 128)], moving=b[...]);",
        fix="Tile K in blocks of 128 and accumulate in PSUM.",
    ),
    Rule(
        "C2N2433",
        E,
        "dtype not allowed here",
        "{what}",
        _HW
        + " Matmul inputs are fp8/bf16/fp16/tf32/fp32 (fp32 only with fp32) and accumulate to float32; memset values match the tile's dtype; DMA accumulation is add only.",
        example="matmul with int32 operands",
        fix="Convert operands to a supported dtype.",
    ),
    Rule(
        "C2N2434",
        E,
        "on-chip tile below rank 2",
        "tile '{name}' has rank {rank}; SBUF/PSUM tiles are at least 2-D",
        _HW,
        example="alloc t: float32[128] sbuf;",
        fix="Add a free dimension: float32[128, 1].",
    ),
    Rule(
        "C2N2435",
        E,
        "DMA endpoint",
        "{what} must be {need}",
        _HW
        + " load moves HBM -> SBUF, store moves SBUF -> HBM; DMA cannot read PSUM (evacuate with tensor_copy first).",
        example="store(dst=y[...], src=acc[...]);  # acc in psum",
        fix="Copy PSUM to an SBUF tile, then store.",
    ),
    Rule(
        "C2N2436",
        E,
        "engine operand in HBM",
        "operand '{operand}' of an engine instruction is the HBM tensor '{name}'",
        _HW + " Compute engines read and write on-chip tiles only.",
        example="tensor_tensor(dst=t[...], op=add, a=x[...], b=t[...]);  # x in HBM",
        fix="Load the tensor into an SBUF tile first.",
    ),
    Rule(
        "C2N2437",
        E,
        "reduction along the partition axis",
        "tensor_reduce axes {axes} must be free axes (>= 1)",
        _HW
        + " Engines reduce along free axes only; cross-partition reductions use matmul or transposes.",
        example="tensor_reduce(dst=r[...], op=add, src=t[...], axes=(0,));",
        fix="Transpose so the reduced axis is free.",
    ),
    Rule(
        "C2N2438",
        E,
        "view outside its tensor",
        "view of '{name}' reaches index {last} (first {first}) of a dimension of size {ext}",
        _HW,
        example="t[ds(64, 128), ...] of a 128-row tile",
        fix="Bound the slice with min(...) for ragged tails.",
    ),
    Rule(
        "C2N2439",
        E,
        "zero step",
        "'{var}' has step 0",
        _VER,
        example="for t = range(0, N, 0) affine {}",
        fix="Use a positive step.",
    ),
    Rule(
        "C2N2440",
        W,
        "SBUF capacity exceeded",
        "SBUF allocations reach {bytes} bytes per partition (trn2 has {limit}) at '{name}'",
        _HW + " Counted conservatively: the sum of all SBUF allocations, each counted once.",
        example="several alloc t: float32[128, 65536] sbuf;",
        fix="Use smaller free tiles or reuse buffers.",
    ),
    Rule(
        "C2N2441",
        E,
        "transpose too large",
        "a TensorE transpose handles at most {limit} x {limit}",
        _HW,
        example="tensor_transpose(dst=p[...], src=t[ds(0, 128), ds(0, 256)]);",
        fix="Transpose in 128 x 128 blocks.",
    ),
    Rule(
        "C2N2442",
        E,
        "per-partition operand is not [P, 1]",
        "operand '{operand}' must hold one value per partition, it has {size} per partition",
        _HW + " Scalar operands of tensor_scalar/activation (bias, scale) and scan initial values"
        " are immediates or [P, 1] tiles broadcast along the free dims.",
        example="tensor_scalar(dst=t[...], src=t[...], op0=mul, operand0=s[ds(0, 128), ds(0, 4)]);",
        fix="Reduce the operand to one column first, or use tensor_tensor.",
    ),
    Rule(
        "C2N2443",
        E,
        "operands span different partitions",
        "'{a}' spans {pa} partitions but '{b}' spans {pb}",
        _HW + " Vector/Scalar/GpSimd instructions keep data in its partition: every operand of an"
        " elementwise instruction covers the same number of partitions.",
        example="tensor_tensor(dst=t[ds(0, 128), ...], op=add, a=u[ds(0, 64), ...], b=...);",
        fix="Slice the operands to the same partition range.",
    ),
    Rule(
        "C2N2444",
        E,
        "integer operation not supported",
        "int_arith: {what}",
        _VER + " An exact 32-bit integer operation (int_arith) takes add, sub, mul, div, mod, shr,"
        " max, min or a comparison, writes an int32/uint32 tile (a float32 0/1 tile for a"
        " comparison) and reads at least one tile.",
        example="int_arith(dst=t[...], op=exp, a=u[...], b=1);",
        fix="Spell bitwise operations and shifts as tensor_tensor/tensor_scalar.",
    ),
    Rule(
        "C2N2445",
        E,
        "malformed iteration",
        "iterate: {what}",
        _VER + " An iteration (iterate) names its carried variables once each, with a dtype, an"
        " initial value and an update; its result is one of them; carry(v, dtype) appears only"
        " in the updates and the condition of the iteration that carries v, with v's dtype.",
        example="map: y[i] = iterate(r: float32 = x[i] -> carry(s, float32); true; 4; r) for i < N;",
        fix="This is a bug in the lifter or a hand-written IR: name the variable the loop carries.",
    ),
    Rule(
        "C2N2446",
        E,
        "loop condition not decidable when tracing",
        "the condition of loop '{var}' reads more than scalar parameters: {what}",
        _VER + " A loop's `when` condition is decided once, in Python, while the kernel is traced:"
        " it may read only scalar parameters and literals, compared and combined with"
        " `&&`, `||`, `!`, `+`, `-` and `*`.",
        example="for t = range(0, 2, 1) affine when t == 0 { ... }",
        fix="This is a bug in the passes or a hand-written IR: a condition on data or on a loop"
        " variable belongs in the statement's guard.",
    ),
    Rule(
        "C2N2448",
        E,
        "malformed note",
        "note code '{value}' is not a C2N id",
        _VER,
        example='note(code="X1", text="...");',
        fix="Use a declared C2Nxxxx id.",
    ),
    Rule(
        "C2N2449",
        E,
        "malformed IR",
        "malformed tile IR: {reason}",
        _VER
        + " The IR is too malformed to check further (a node of the wrong type where another is required).",
        example="Compute(target=Read(...), ...)",
        fix="This is a bug in the pass that built the IR: report it.",
    ),
)
