"""Helpers shared by the subcommands: diagnostics output, reading files, writing atomically."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from cuda2nki.diagnostics import Diagnostic, render_all, use_color
from cuda2nki.fileio import read_regular, read_text, write_atomic

__all__ = ["KERNEL_HELP", "print_diagnostics", "read_text", "write_atomic"]

#: help of ``--kernel`` where a CUDA file may hold several kernels
KERNEL_HELP = (
    "kernel to work on (default: the binding's, or the only one); a template kernel launched "
    "with several template arguments in one file is named per instantiation, e.g. "
    "--kernel 'reduce<256>' or 'scale<128, float>'"
)


def print_diagnostics(diags: Iterable[Diagnostic], stream=None) -> None:
    diags = list(diags)
    if not diags:
        return
    stream = stream or sys.stderr
    sources: dict[str, list[str]] = {}
    for d in diags:
        if d.loc.file not in sources:
            try:
                raw = read_regular(Path(d.loc.file))
                sources[d.loc.file] = raw.decode("utf-8", "replace").splitlines()
            except OSError:
                sources[d.loc.file] = []
    print(render_all(diags, sources, use_color(stream)), file=stream)


# --------------------------------------------------------------------------- parser helpers

HARDWARE = ("trn1", "trn2", "trn3")
NKI_APIS = ("nki", "legacy")
SEVERITIES = ("error", "warning", "note")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; every option's default shown where it says something (not for
    flags, empty lists or None)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default" in text
            or default in (None, False, [], argparse.SUPPRESS)
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


def add_command(
    sub: argparse._SubParsersAction, name: str, summary: str, doc: str | None
) -> argparse.ArgumentParser:
    """A subcommand described by its module docstring's leading paragraphs (up to three, and
    none past a literal block)."""
    paras = []
    for para in (doc or summary).strip().split("\n\n"):
        if "::" in para or para.startswith(" ") or len(paras) == 3:
            break
        paras.append(para.replace("``", "`"))
    description = "\n\n".join(paras)
    return sub.add_parser(
        name, help=summary, description=description, formatter_class=HelpFormatter
    )


def add_hw(p: argparse.ArgumentParser, default: str | None = "trn2") -> None:
    """``--hw``: the Trainium generation; ``--target trnN`` still works (deprecated)."""
    shown = "" if default else " (default: the kernel's own, else trn2)"
    p.add_argument(
        "--hw", choices=HARDWARE, default=default, help=f"Trainium generation to model{shown}"
    )
    p.add_argument("--target", dest="_deprecated_target", choices=HARDWARE, help=argparse.SUPPRESS)
    p.set_defaults(_target_means="hw")


def add_api(p: argparse.ArgumentParser) -> None:
    """``--api``: the NKI API to write; ``--target nki|legacy`` still works (deprecated)."""
    p.add_argument(
        "--api",
        choices=NKI_APIS,
        default="nki",
        help="NKI API to write: nki (nki.language / nki.isa) or legacy (neuronxcc.nki)",
    )
    p.add_argument("--target", dest="_deprecated_target", choices=NKI_APIS, help=argparse.SUPPRESS)
    p.set_defaults(_target_means="api")


def add_fail_on(
    p: argparse.ArgumentParser, what: str = "a finding", default: str = "warning"
) -> None:
    """``--fail-on``: the least severity that fails the run.  ``check`` and ``review`` judge a
    port, so a warning fails by default; ``port`` and ``migrate`` draft ports, whose warnings
    are advice, so by default only an error does (a refusal fails them anyway)."""
    p.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default=default,
        help=f"exit 1 when {what} of this severity or worse is reported",
    )


def at_or_above(severities: Iterable[str], fail_on: str) -> bool:
    """Whether any of ``severities`` (``error``, ``warning``, ``note``) reaches ``fail_on``."""
    from cuda2nki.diagnostics import Severity

    threshold = Severity.parse(fail_on)
    return any(Severity.parse(s) >= threshold for s in severities)


def apply_deprecated(args: argparse.Namespace, stream=None) -> None:
    """Map the old spellings (``--target`` for ``--hw``/``--api``, ``-p`` for ``--passes``)
    onto the new options, with a note on stderr."""
    stream = stream or sys.stderr
    old = getattr(args, "_deprecated_target", None)
    if old is not None:
        dest = args._target_means
        setattr(args, dest, old)
        print(f"cuda2nki: note: --target is deprecated here; use --{dest} {old}", file=stream)
    old_passes = getattr(args, "_deprecated_passes", None)
    if old_passes is not None:
        args.passes = old_passes
        print("cuda2nki: note: -p is deprecated for port; use --passes", file=stream)


def defines(items: Iterable[str], option: str = "-D") -> dict[str, str]:
    """``-D NAME[=VALUE]`` options as a dict (``NAME`` alone means ``1``)."""
    from cuda2nki.diagnostics import error

    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not name.strip():
            raise error("C2N0002", option=option, reason=f"{item!r} is not NAME[=VALUE]")
        out[name.strip()] = value if eq else "1"
    return out


def add_template_option(p: argparse.ArgumentParser) -> None:
    """``--template NAME=VALUE``: a template argument for kernels no launch instantiates."""
    p.add_argument(
        "--template",
        dest="templates",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="template argument (an integer, a type or a device function) for a template "
        "kernel that no launch site instantiates (repeatable)",
    )


def templates(items: Iterable[str]) -> dict[str, str]:
    """``--template NAME=VALUE`` options as a dict (the value is required)."""
    from cuda2nki.diagnostics import error

    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not name.strip().isidentifier() or not eq or not value.strip():
            raise error("C2N0002", option="--template", reason=f"{item!r} is not NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def fails(report: dict, fail_on: str) -> bool:
    """Whether a check report fails the gate: numbers outside tolerance, a static-only check
    (nothing ran, so never a pass), or a finding of severity ``fail_on`` or worse."""
    if report["verdict"] == "unverified":
        return True
    if any(n.get("classification") != "expected" for n in report["numerics"]):
        return True
    return at_or_above((f["severity"] for f in report["findings"]), fail_on)


def add_preprocessor_options(p: argparse.ArgumentParser) -> None:
    """``-D NAME[=VALUE]`` and ``-I DIR``, as a compiler takes them (each repeatable)."""
    p.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="define a preprocessor macro (repeatable; default: none)",
    )
    p.add_argument(
        "-I",
        dest="include_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="add an include directory (repeatable; default: none)",
    )
