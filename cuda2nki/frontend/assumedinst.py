"""An assumed instantiation of a template kernel that nothing instantiates.

Library headers and collections of kernels define ``template <typename T, int BS> __global__``
kernels that no launch, explicit instantiation or including file of the tree instantiates.
Without template arguments the kernel has no types to compute in, so it could be neither ported
nor checked.  Such a kernel is instantiated with assumed arguments instead, and a note (C2N2100)
at the kernel says which, so that the port and its check compute in one stated configuration:

* a type parameter becomes ``float`` (:data:`ASSUMED_TYPE`);
* an integer parameter takes its default argument if it has one, else the first value of
  :data:`ASSUMED_INTS` under which the front end accepts the kernel (128, the block size a
  default launch picks, so a parameter that is the block size agrees with the launch; then
  32, a warp, for a parameter that sizes a tile of a warp);
* ``--template NAME=VALUE`` values keep precedence; a kernel with a function parameter, or one
  that any launch site names (its arguments come from there, maybe partly), is left alone.

The front end lowers a file once as written; the kernels still uninstantiated after the files
including it had their say (:func:`assumed_kernels`) are then lowered again under the assumed
arguments, which :func:`with_assumed` passes to the lowering beside the ``--template`` values
under a key no C++ name can take.  A kernel refused under every assumption is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cuda2nki.diagnostics import Diagnostic, SourceLoc, make
from cuda2nki.frontend import ast as A

#: the type a type parameter is assumed to be
ASSUMED_TYPE = "float"
#: the values an integer parameter without a default is assumed to have, in order of preference
ASSUMED_INTS = (128, 32)
#: the key under which the kernels to instantiate so travel in the ``templates`` mapping
_KEY = "::assume"


def assumed_kernels(tu: A.TranslationUnit) -> set[str]:
    """The template kernels of ``tu`` that nothing instantiated (kept with their template
    parameters, or refused so with C2N1023) and no launch site names."""
    launched = {s.kernel for s in tu.launch_sites}
    kept = {k.name for k in tu.kernels if k.template_params and not k.template_args}
    refused = {
        n
        for n in tu.rejected
        if any(d.code == "C2N1023" and f"'{n}'" in d.message for d in tu.diagnostics)
    }
    return {n for n in kept | refused if n.split("<")[0] not in launched}


def with_assumed(templates: Mapping[str, str] | None, ints: Mapping[str, int]) -> dict[str, str]:
    """``templates`` asking the lowering to assume arguments for the kernels of ``ints``, each
    integer parameter without a default as the kernel's value there."""
    said = ",".join(f"{k}={v}" for k, v in sorted(ints.items()))
    return {**(templates or {}), _KEY: said}


def assumed_int(templates: Mapping[str, str], kernel: str) -> int | None:
    """The integer to assume for ``kernel``'s parameters, None when it is not to assume any."""
    for item in templates.get(_KEY, "").split(","):
        name, _, value = item.rpartition("=")
        if name == kernel:
            return int(value)
    return None


def user_templates(templates: Mapping[str, str]) -> dict[str, str]:
    """The ``--template`` values of ``templates``, without the assumption request."""
    return {k: v for k, v in templates.items() if k != _KEY}


def assumed_values(
    params: Iterable[tuple[str, str, object]], templates: Mapping[str, str], value: int
) -> tuple[dict[str, str], list[str]] | None:
    """``templates`` completed for parameters ``(name, kind, default)``: each one without a
    value or a default takes the assumed one (``value`` for an integer); with the
    names of the parameters assumed.  None for a function parameter without a value."""
    out = user_templates(templates)
    said = []
    for name, kind, default in params:
        if name in out or default is not None:
            continue
        if kind == "function":
            return None
        out[name] = ASSUMED_TYPE if kind == "typename" else str(value)
        said.append(name)
    return out, said


def assumed_env(
    unit: Any, fd: Any, templates: Mapping[str, str], value: int, from_templates: Callable
) -> dict | None:
    """The arguments of template kernel ``fd`` (a driver ``FuncDef``) under the assumption,
    through ``from_templates`` (the lowering's ``--template`` reader), with the note; None
    when some cannot be assumed or do not fit."""
    got = assumed_values([(p[0], p[1], p[2]) for p in fd.template_params], templates, value)
    if got is None:
        return None
    values, said = got
    env = from_templates(unit, fd, values)
    if env is not None:
        unit.diags.append(assumption_note(unit.loc(fd.node), fd.name, said, env))
    return env


def assumption_note(
    loc: SourceLoc, kernel: str, said: list[str], env: Mapping[str, object]
) -> Diagnostic:
    """The note (C2N2100) saying with which arguments ``kernel`` was instantiated, ``said``
    the parameters among them that were assumed."""
    from cuda2nki.frontend.typesys import type_str

    def text(name: str) -> str:
        v = env[name]
        return f"{name}={v if isinstance(v, int) else type_str(v)}"  # type: ignore[arg-type]

    return make(
        "C2N2100",
        loc,
        what=f"template arguments {', '.join(text(k) for k in env)}",
        kernel=kernel,
        source=(
            "an assumed instantiation: no launch site, explicit instantiation or including file "
            f"instantiates the template, so {', '.join(text(k) for k in said)} "
            f"{'was' if len(said) == 1 else 'were'} assumed (a type as {ASSUMED_TYPE}, an "
            f"integer without a default as the first of {list(ASSUMED_INTS)} the kernel "
            "accepts); pass --template NAME=VALUE for others"
        ),
    )
