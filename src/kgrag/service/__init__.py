"""``kgrag serve``: an HTTP API and a web page for asking questions over one KG (extra ``[serve]``).

>>> from kgrag.service import create_app      # doctest: +SKIP
>>> app = create_app("kg/metaqa")             # doctest: +SKIP  (any ASGI server runs it; `kgrag serve` uses uvicorn)

FastAPI is imported only when the app is built, so ``import kgrag.service`` works without the extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgrag.service.state import ServiceConfig

if TYPE_CHECKING:
    from fastapi import FastAPI


def create_app(kg: Any, config: ServiceConfig | None = None, **kwargs: Any) -> FastAPI:
    """See :func:`kgrag.service.app.create_app`."""
    from kgrag.service.app import create_app as _create_app

    return _create_app(kg, config, **kwargs)


__all__ = ["ServiceConfig", "create_app"]
