"""General ids shared by every command: usage and input-file errors (C2N0xxx)."""

from cuda2nki.diagnostics import Rule, Severity, register

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

register(
    Rule(
        "C2N0001",
        E,
        "cannot read input file",
        "cannot read '{path}': {reason}",
        "The file given on the command line does not exist, is not readable, or is not text. "
        "A CUDA source is read as UTF-8, and any bytes in it that are not UTF-8 as Latin-1 (as "
        "compilers accept old files with Latin-1 comments); a file with NUL bytes is not text. "
        "Bindings, configuration files and ports must be UTF-8.",
        fix="Check the path and permissions; convert a binding or port to UTF-8.",
    ),
    Rule(
        "C2N0002",
        E,
        "invalid command-line value",
        "invalid value for {option}: {reason}",
        "A command-line option was given a value that cannot be used.",
        fix="See `cuda2nki COMMAND --help`.",
    ),
    Rule(
        "C2N0003",
        E,
        "invalid binding file",
        "invalid binding: {reason}",
        "The kernel binding (a `.toml` sidecar or inline comments) is malformed or incomplete: every "
        "pointer parameter needs a shape, dtype and role, and the launch needs grid and block.",
        example='[params]\nx = { shape = ["N"], dtype = "float32" }  # role missing',
        fix='Add the missing field, e.g. `role = "in"`.',
    ),
    Rule(
        "C2N0004",
        E,
        "cannot write output",
        "cannot write '{path}': {reason}",
        "An output file could not be written.",
        fix="Check the output directory exists and is writable.",
    ),
    Rule(
        "C2N0005",
        E,
        "internal error",
        "internal error: {reason}",
        "cuda2nki hit a bug. The message names the failing component; please report it with the input.",
        fix="Report the input that triggers it.",
    ),
    Rule(
        "C2N0006",
        E,
        "kernel job failed",
        "{reason}",
        "In a batch run, the work on one file did not finish: it exceeded the time limit, the memory "
        "limit, or the worker process died. The other files carry on. The file's kernels decided "
        "before it stopped keep their records; each kernel not finished (or whose check did not "
        "finish) is reported as failed with this id, and a file stopped before it was parsed is "
        "one failed record.",
        fix="Raise --timeout / --memory, or run `cuda2nki port` on the file alone to see the problem.",
    ),
    Rule(
        "C2N0007",
        E,
        "binding for another kernel",
        "the binding has no entry for kernel '{kernel}'; it binds {known}",
        'A binding applies only to the kernel it names: `kernel = "..."` of a single-kernel '
        "binding, or NAME of a `[kernels.NAME]` table. A binding given with --binding that names "
        "other kernels only is refused rather than applied to the wrong kernel (whose parameters "
        "would get another kernel's shapes and launch).",
        example='kernel = "scale"   # but the command works on --kernel shift',
        fix="Add a `[kernels.NAME]` table for the kernel to the binding, or pick one of the kernels "
        "it binds with --kernel.",
    ),
    Rule(
        "C2N0008",
        N,
        "binding inferred: the sidecar binds other kernels",
        "the sidecar {path} has no binding for kernel '{kernel}' (it binds {known}); "
        "the binding of '{kernel}' is inferred from the source",
        "The sidecar `.toml` beside a CUDA file names the kernels it binds. A kernel of the file "
        "that it does not name is treated as if there were no sidecar: its binding is inferred "
        "from the host code and the kernel's index expressions.",
        fix="Nothing to do if the inference is right; otherwise add a `[kernels.NAME]` table for "
        "the kernel to the sidecar.",
    ),
)
