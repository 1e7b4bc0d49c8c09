"""Method settings in the service: the operator's (``kgrag serve --set``) and what a client may add.

A client's ``settings`` reach method constructors, which open files, load models and connect to databases by
the names they are given, so they are checked against each field's marker (:mod:`kgrag.methods.settings`)
before any work starts. Closed by default: a field a client may set is a boolean, a ``Literal`` choice, a
number with a :class:`ClientRange` or text with a :class:`ClientText`; anything else is the operator's.
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from kgrag.methods.base import Method, MethodConfigError
from kgrag.methods.settings import ClientRange, ClientText, OperatorOnly, marker

ValueKind = Literal["bool", "choice", "number", "text", "other"]
SCALARS = (str, int, float, bool, type(None))


class SettingRejected(ValueError):
    """A client's setting the service will not use; ``status`` is 403 (operator-only) or 422 (bad value)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def value_kind(annotation: Any) -> ValueKind:
    """What a field holds, ignoring ``None``: a bool, one of fixed choices, a number, text, or anything else."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) in (Union, types.UnionType):
        kinds = {value_kind(a) for a in args}
        return kinds.pop() if len(kinds) == 1 else "other"
    if get_origin(annotation) is Literal:
        return "choice" if all(isinstance(a, str | int | bool) for a in args) else "other"
    if annotation is bool:
        return "bool"
    if annotation in (int, float):
        return "number"
    return "text" if annotation is str else "other"


def client_may_set(info: FieldInfo) -> bool:
    """True when some values of the field are a client's to choose (closed by default)."""
    kind, mark = value_kind(info.annotation), marker(info)
    if isinstance(mark, OperatorOnly):
        return False
    return (
        kind in ("bool", "choice")
        or (kind == "number" and isinstance(mark, ClientRange))
        or (kind == "text" and isinstance(mark, ClientText))
    )


def check_client_value(key: str, value: Any, info: FieldInfo) -> None:
    """Raise :class:`SettingRejected` unless a client may give ``key`` this value."""
    if not client_may_set(info):
        mark = marker(info)
        what = f"names {mark.kind}" if isinstance(mark, OperatorOnly) else "is not a client's to choose"
        raise SettingRejected(403, f"setting {key!r} {what}: only the operator sets it (kgrag serve --set {key}=...)")
    if not isinstance(value, SCALARS):
        raise SettingRejected(422, f"setting {key!r}: expected a single value, got a JSON {_json_type(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise SettingRejected(422, f"setting {key!r}: {value} is not a finite number")
    mark = marker(info)
    if isinstance(mark, ClientRange) and _is_number(value) and not mark.low <= value <= mark.high:
        raise SettingRejected(422, f"setting {key!r}={value}: clients may set {mark.low:g} to {mark.high:g}")
    if isinstance(mark, ClientText) and isinstance(value, str) and len(value) > mark.max_chars:
        raise SettingRejected(422, f"setting {key!r}: {len(value)} characters; the limit is {mark.max_chars}")


def client_settings(method: type[Method], settings: Mapping[str, Any], operator: Mapping[str, Any]) -> dict[str, Any]:
    """The settings to build ``method`` with: the operator's for it, overridden by the client's (checked).

    Client values are validated strictly (no ``"5"`` for a number, no ``1`` for a boolean): what passes is
    exactly the JSON the client sent."""
    fields = method.Config.model_fields
    for key, value in settings.items():
        if key not in fields:
            known = ", ".join(k for k, info in fields.items() if client_may_set(info)) or "none"
            raise SettingRejected(422, f"method {method.name!r} has no setting {key!r} (clients may set: {known})")
        check_client_value(key, value, fields[key])
    try:
        method.Config.model_validate(dict(settings), strict=True)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise SettingRejected(422, f"method {method.name!r}: {problems}") from None
    return {**operator_settings(method, operator), **settings}


def operator_settings(method: type[Method], operator: Mapping[str, Any]) -> dict[str, Any]:
    """The operator's settings that ``method`` has (``--set`` applies to every method with that setting)."""
    return method.own_settings(operator)


def check_operator_settings(methods: Mapping[str, type[Method]], operator: Mapping[str, Any]) -> None:
    """Fail at startup, not on the first request, for an operator setting no method has or a bad value."""
    unknown = set(operator) - {k for cls in methods.values() for k in cls.setting_names()}
    if unknown:
        raise MethodConfigError(f"no method has the setting(s) {', '.join(sorted(unknown))}")
    for name, cls in methods.items():
        try:
            cls.Config(**{k: v for k, v in operator.items() if k in cls.Config.model_fields})
        except ValidationError as exc:
            raise MethodConfigError(f"method {name!r}: {exc.errors()[0]['msg']} ({exc.errors()[0]['loc']})") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_type(value: Any) -> str:
    return "object" if isinstance(value, Mapping) else "array" if isinstance(value, list) else type(value).__name__
