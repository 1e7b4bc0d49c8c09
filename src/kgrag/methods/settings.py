"""Markers on method settings: which values a remote client of ``kgrag serve`` may choose.

For the library and the CLI a setting is a plain value: whoever runs kgrag may point ``router`` at any file
or ``cypher_backend`` at any server. A remote client must not. A path setting tells by its error whether a
file exists, and a FIFO path blocks a worker for ever; a host setting makes the server connect out; a model
setting loads what it names; ``hops=50`` runs for minutes. So every field of a method's ``Config`` says
in its ``Annotated`` type what a client may do with it:

* :class:`OperatorOnly` (:data:`PathSetting`, :data:`ModelSetting`, :data:`HostSetting`,
  :data:`MethodSetting`): the value names something outside the request; only the operator sets it
  (``kgrag serve --set``).
* :class:`ClientRange`: a number a client may set within ``[low, high]`` — bounds under which every step
  stays short on a MetaQA-sized KG.
* :class:`ClientText`: free text a client may send (e.g. a query in the method's DSL), up to a length.

Booleans and ``Literal`` choices need no marker: every value is safe. The service refuses whatever is not
allowed (:mod:`kgrag.service.settings` — an unmarked field is operator-only), and a unit test fails for any
registered method's field without a marker, so a new setting cannot slip through unclassified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class OperatorOnly:
    """The setting names ``kind`` (a file, a model, a host...): clients may not set it."""

    kind: str


@dataclass(frozen=True)
class ClientRange:
    """A number clients may set between ``low`` and ``high`` (inclusive); the library itself is not limited."""

    low: float
    high: float


@dataclass(frozen=True)
class ClientText:
    """Free text clients may set, at most ``max_chars`` long; it must not be read as a path or address."""

    max_chars: int


Marker = OperatorOnly | ClientRange | ClientText

PathSetting = Annotated[str, OperatorOnly("a file")]
ModelSetting = Annotated[str, OperatorOnly("a model")]
HostSetting = Annotated[str, OperatorOnly("a database or host")]
MethodSetting = Annotated[str, OperatorOnly("another method")]


def marker(info: FieldInfo) -> Marker | None:
    """The field's marker, if it has one."""
    return next((m for m in info.metadata if isinstance(m, Marker)), None)


__all__ = [
    "ClientRange",
    "ClientText",
    "HostSetting",
    "Marker",
    "MethodSetting",
    "ModelSetting",
    "OperatorOnly",
    "PathSetting",
    "marker",
]
