"""Entry point of the ``cuda2nki`` command.

Each subcommand lives in its own module ``cuda2nki.cli.cmd_<name>`` exposing
``register(subparsers) -> None``; the parser it adds sets ``func(args) -> int`` as its default.
Exit codes: 0 ok, 1 findings / mismatch / literal lowering, 2 usage or input error.
Bad input never ends in a traceback: a :class:`DiagnosticError` is rendered clang-style, and an
unexpected exception becomes an internal-error diagnostic (set ``CUDA2NKI_DEBUG=1`` for the trace).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence

from cuda2nki import __version__
from cuda2nki.cli.common import apply_deprecated, print_diagnostics
from cuda2nki.cli.config import apply as apply_config
from cuda2nki.cli.config import find as find_config
from cuda2nki.diagnostics import DiagnosticError, make

COMMANDS = (
    "parse",
    "run",
    "simulate",
    "port",
    "check",
    "review",
    "migrate",
    "bind",
    "rules",
    "completion",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cuda2nki",
        description="Migrate CUDA kernels to AWS Trainium NKI and check ports, on the CPU.",
    )
    parser.add_argument("--version", action="version", version=f"cuda2nki {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"cuda2nki.cli.cmd_{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"cuda2nki.cli.cmd_{name}":
                continue  # command not built yet
            raise
        mod.register(sub)
    return parser


class Terminated(BaseException):
    """SIGTERM or SIGHUP (``timeout``, CI cancellation, a closed terminal): unwinds like Ctrl-C so
    every ``finally`` runs -- worker pools and sandboxes are stopped, temporary files removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


def _handle_termination() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _terminate)


def main(argv: Sequence[str] | None = None) -> int:
    _handle_termination()
    parser = build_parser()
    try:
        config = find_config()
        if config is not None:
            apply_config(parser, config)
    except DiagnosticError as exc:
        print_diagnostics(exc.diagnostics)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help exits 0, usage errors exit 2
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    apply_deprecated(args)
    try:
        return int(args.func(args))
    except DiagnosticError as exc:
        print_diagnostics(exc.diagnostics)
        return 2
    except KeyboardInterrupt:
        return 130
    except Terminated as exc:
        return 128 + exc.signum
    except BrokenPipeError:  # `cuda2nki ... | head`: the reader left; nothing more to say
        _silence_stdout()
        return 141
    except Exception as exc:  # noqa: BLE001 - last line of defence: never a traceback
        if os.environ.get("CUDA2NKI_DEBUG"):
            traceback.print_exc()
        print_diagnostics([make("C2N0005", reason=f"{type(exc).__name__}: {exc}")])
        return 2


def _silence_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush does not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
