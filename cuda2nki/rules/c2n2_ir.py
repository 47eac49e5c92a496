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
