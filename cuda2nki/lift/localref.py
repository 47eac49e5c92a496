"""The address of a local variable in the symbolic execution.

``&p`` of a local (a struct's member pointer passed to one of its member functions, as the
  front end lowers ``obj[i]`` / ``*obj`` of an accessor struct) is a :class:`LocalRef`: a
  read-only reference to the local's value at the call.  Reading through it gives that value;
  writing through it -- a member function assigning its object's member -- is refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocalRef:
    """``&name`` of a local variable whose value was ``value`` when its address was taken."""

    name: str
    value: object
