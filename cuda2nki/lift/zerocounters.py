"""Counters a kernel takes slots from start where the host puts them: at zero.

A stream compaction or a queue push (``int pos = atomicAdd(count, 1); out[pos] = v;``) indexes
its output with the counter's running value, so the counter's value before the launch decides
where every element goes; hosts zero it right before each launch (``cudaMemset(d_count, 0,
sizeof(int))``).  Random initial values would send the kernel's stores outside the output.  An
integer ``inout`` pointer that is the target of an ``atomicAdd``/``atomicSub`` whose old value
is used (in the kernel or in a device helper it passes the pointer to, several levels deep),
and whose buffer the launching host code zeroes right before the launch
(:mod:`cuda2nki.frontend.hostzero`), gets the values ``[0, 1)`` -- zeros -- with a note; a range
the binding has is kept.
"""

from __future__ import annotations

from cuda2nki.diagnostics import make
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.runningatomics import counter_params


def zero_counters(
    params: dict,
    fn: A.Function,
    site: A.LaunchSite | None,
    kernel: str,
    diags: list,
    tu: A.TranslationUnit | None = None,
) -> None:
    """Give the running counters of ``fn`` that the host zeroes before the launch ``site``
    the values ``[0, 1)`` (see the module doc)."""
    from cuda2nki.lift.hostargs import slots

    if site is None or site.host is None or not getattr(site.host, "zeroed", ()):
        return
    counters = counter_params(tu, fn)  # through the device helpers it calls, with ``tu``
    zeroed = site.host.zeroed
    for slot in slots(fn, site):
        spec = params.get(slot.param)
        if (
            slot.param not in counters
            or slot.member is not None
            or slot.arg >= len(zeroed)
            or not zeroed[slot.arg]
            or not isinstance(spec, dict)
            or "range" in spec
            or spec.get("role") != "inout"
            or not str(spec.get("dtype", "")).startswith(("int", "uint"))
        ):
            continue
        spec["range"] = [0, 1]
        p = next(q for q in fn.params if q.name == slot.param)
        diags.append(
            make(
                "C2N2100",
                p.loc,
                what=f"'{slot.param}' values in [0, 1)",
                kernel=kernel,
                source=f"the host code, which zeroes it right before the launch "
                f"({site.loc.file}:{site.loc.line}), while the kernel takes slots from it "
                "(an atomicAdd/atomicSub whose old value is used)",
            )
        )
