"""Sizes a host reads from its command line, which :mod:`cuda2nki.frontend.hostvals` evaluates.

* With a default: ``int n = argc > 1 ? atoi(argv[1]) : 1024;`` (any spelling of the test, the
  conversion and the branch order): the default is the value, and a note says so.
* Without one: ``rows = atoi(argv[1]);``, ``n = std::stoi(argv[2])``, ``strtol(argv[1], NULL,
  10)``: a sensible default is taken (:data:`DEFAULT_INT`, or :data:`DEFAULT_FLOAT` for a
  floating conversion), with a note naming the argument.  Sizes need no exact value (check
  chooses its own), and a non-size scalar read this way is best set in the binding.
"""

from __future__ import annotations

import tree_sitter as ts

from cuda2nki.frontend.cst import COMMENT_IDS

#: conversions of a command-line string, by whether they give a floating value
CONVERSIONS = {
    "atoi": False,
    "atol": False,
    "atoll": False,
    "strtol": False,
    "strtoul": False,
    "strtoll": False,
    "strtoull": False,
    "stoi": False,
    "stol": False,
    "stoul": False,
    "stoll": False,
    "atof": True,
    "strtod": True,
    "strtof": True,
    "stof": True,
    "stod": True,
}

#: the value taken for an integer read from the command line with no default
DEFAULT_INT = 1024
#: the value taken for a floating value read from the command line with no default
DEFAULT_FLOAT = 1.0


def _kids(n: ts.Node) -> list[ts.Node]:
    return [c for c in n.named_children if c.kind_id not in COMMENT_IDS]


def _bare(n: ts.Node | None) -> ts.Node | None:
    """``n`` without parentheses and casts around it."""
    while n is not None and n.type in ("parenthesized_expression", "cast_expression"):
        if n.type == "cast_expression":
            n = n.child_by_field_name("value")
            continue
        inner = _kids(n)
        if len(inner) != 1:
            return n
        n = inner[0]
    return n


def conversion(call: ts.Node) -> bool | None:
    """Whether ``call`` converts a string to a number: True for a floating conversion, False
    for an integer one, None when it is no such call."""
    if call.type != "call_expression":
        return None
    f = call.child_by_field_name("function")
    name = "" if f is None else f.text.decode("utf-8", "replace").split("::")[-1].strip()
    return CONVERSIONS.get(name)


def reads_command_line(n: ts.Node | None) -> bool:
    """``n`` is a conversion of a string (``atoi(argv[1])``), possibly cast or parenthesised."""
    n = _bare(n)
    return n is not None and conversion(n) is not None


def default_branch(cond: ts.Node) -> tuple[ts.Node, ts.Node] | None:
    """For ``c ? atoi(argv[1]) : 1024`` (or the branches the other way round): (the branch that
    does not read the command line, the one that does); None when not exactly one branch
    does."""
    yes = cond.child_by_field_name("consequence")
    no = cond.child_by_field_name("alternative")
    if yes is None or no is None:
        return None
    a, b = reads_command_line(yes), reads_command_line(no)
    if a == b:
        return None
    return (no, yes) if a else (yes, no)


def default_of(call: ts.Node) -> int | float:
    """The value taken for a conversion with no default."""
    return DEFAULT_FLOAT if conversion(call) else DEFAULT_INT
