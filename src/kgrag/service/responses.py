"""The service's JSON responses and how a library error maps to an HTTP status and message."""

from __future__ import annotations

import json
import logging
from typing import Any

from kgrag.errors import KGRagError, LLMError, MissingExtraError, ModelSetupError, UnknownEntityError
from kgrag.methods.base import MethodConfigError
from kgrag.registry import UnknownNameError

try:
    from fastapi.responses import Response
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingExtraError("serve", "the kgrag service", "fastapi") from exc

log = logging.getLogger("kgrag.service")


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _jsonable(obj: Any) -> Any:
    """json.dumps fallback for values methods put in step outputs (numpy scalars/arrays, paths, sets)."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    return str(obj)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=_jsonable)


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(dumps(obj), status_code=status, media_type="application/json")


def error_status(exc: BaseException) -> int:
    """HTTP status for a library error raised while serving a request."""
    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, MissingExtraError | ModelSetupError | LLMError):
        return 503
    if isinstance(exc, UnknownNameError | UnknownEntityError | MethodConfigError | KGRagError):
        return 422
    return 500


def error_message(exc: BaseException) -> str:
    if isinstance(exc, ApiError):
        return exc.message
    if error_status(exc) == 500:
        return f"internal error ({type(exc).__name__}: {exc}); the server logged the traceback"
    if isinstance(exc, LLMError | MissingExtraError | ModelSetupError):
        return f"the LLM is not available: {exc}"
    return str(exc)


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {dumps(data)}\n\n"
