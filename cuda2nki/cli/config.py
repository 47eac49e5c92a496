"""Defaults from ``[tool.cuda2nki]`` in ``pyproject.toml``, as ruff reads ``[tool.ruff]``.

The nearest ``pyproject.toml`` at or above the working directory that has a ``[tool.cuda2nki]``
table is used.  Its keys are long option names (``fail-on`` or ``fail_on``) and apply to every
subcommand that has the option; a ``[tool.cuda2nki.COMMAND]`` table applies to that command
only and wins.  The command line wins over both::

    [tool.cuda2nki]
    hw = "trn2"
    fail-on = "error"

    [tool.cuda2nki.check]
    seeds = 3
    ignore = ["C2N5003"]

A key no subcommand knows, or a value of the wrong kind, is an error pointing at its line.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuda2nki.diagnostics import SourceLoc, error

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

FILE = "pyproject.toml"


@dataclass(frozen=True)
class Config:
    path: Path
    text: str
    table: Mapping[str, Any]


def find(start: Path | None = None) -> Config | None:
    """The nearest ``pyproject.toml`` with a ``[tool.cuda2nki]`` table, or None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        path = folder / FILE
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (OSError, UnicodeDecodeError):
            continue
        except tomllib.TOMLDecodeError as exc:
            raise error(
                "C2N0002", SourceLoc(str(path), 1, 1), option=FILE, reason=str(exc)
            ) from None
        table = data.get("tool", {}).get("cuda2nki")
        if table is not None:
            return Config(path, text, table)
    return None


def apply(parser: argparse.ArgumentParser, config: Config) -> None:
    """Set the defaults of ``parser``'s subcommands from ``config`` (validated)."""
    commands = _subcommands(parser)
    shared = {k: v for k, v in config.table.items() if not isinstance(v, dict)}
    for key, value in config.table.items():
        if isinstance(value, dict) and key not in commands:
            raise error(
                "C2N0002",
                _where(config, None, key),
                option=f"[tool.cuda2nki.{key}]",
                reason=f"no subcommand '{key}'",
            )
    for key in shared:
        if not any(_action(p, key) for p in commands.values()):
            raise _bad(config, key, None, "no subcommand has this option")
    for name, sub in commands.items():
        own = config.table.get(name, {})
        for key, value in {**shared, **own}.items():
            action = _action(sub, key)
            if action is None:
                if key in own:
                    raise _bad(config, key, name, f"'{name}' has no option --{_dash(key)}")
                continue
            table = name if key in own else None
            sub.set_defaults(**{action.dest: _value(config, key, table, action, value)})


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _dash(key: str) -> str:
    return key.replace("_", "-")


def _action(p: argparse.ArgumentParser, key: str) -> argparse.Action | None:
    flag = "--" + _dash(key)
    for action in p._actions:
        if flag in action.option_strings and action.help != argparse.SUPPRESS:
            return action
    return None


def _value(config: Config, key: str, cmd: str | None, action: argparse.Action, value: Any) -> Any:
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise _bad(config, key, cmd, f"expected true or false, got {value!r}")
        return value
    if isinstance(action, argparse._AppendAction):
        if not isinstance(value, list):
            raise _bad(config, key, cmd, f"expected a list, got {value!r}")
        return [_scalar(config, key, cmd, action, v) for v in value]
    return _scalar(config, key, cmd, action, value)


def _scalar(config: Config, key: str, cmd: str | None, action: argparse.Action, value: Any) -> Any:
    if isinstance(value, bool | dict | list):
        raise _bad(config, key, cmd, f"expected a single value, got {value!r}")
    if action.type is None and not isinstance(value, str):
        raise _bad(config, key, cmd, f"expected a string, got {value!r}")
    try:
        value = action.type(value) if action.type is not None else value
    except (TypeError, ValueError):
        raise _bad(config, key, cmd, f"{value!r} is not a valid value") from None
    if action.choices is not None and value not in action.choices:
        known = ", ".join(map(str, action.choices))
        raise _bad(config, key, cmd, f"{value!r} is not one of {known}")
    return value


def _bad(config: Config, key: str, cmd: str | None, reason: str) -> Exception:
    table = f"tool.cuda2nki.{cmd}" if cmd else "tool.cuda2nki"
    return error("C2N0002", _where(config, key, cmd), option=f"'{key}' in [{table}]", reason=reason)


def _where(config: Config, key: str | None, cmd: str | None) -> SourceLoc:
    """The line of ``key`` in its table (tomllib keeps no positions; the text is searched)."""
    lines = config.text.splitlines()
    header = re.compile(
        r"^\s*\[\s*tool\.cuda2nki" + (r"\." + re.escape(cmd) if cmd else "") + r"\s*\]"
    )
    start = next((i for i, ln in enumerate(lines) if header.match(ln)), None)
    if start is None:
        return SourceLoc(str(config.path), 1, 1)
    if key is None:
        return SourceLoc(str(config.path), start + 1, 1)
    pattern = re.compile(r"^(\s*)[\"']?" + re.escape(key) + r"[\"']?\s*=")
    for i in range(start + 1, len(lines)):
        if lines[i].lstrip().startswith("["):
            break
        m = pattern.match(lines[i])
        if m:
            return SourceLoc(str(config.path), i + 1, len(m.group(1)) + 1)
    return SourceLoc(str(config.path), start + 1, 1)
