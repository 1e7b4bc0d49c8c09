"""What a route asks FastAPI for: the :class:`ServiceState` of the app serving the request.

Routes are module-level functions on an ``APIRouter`` rather than closures over one state, so each can be read,
tested and reused on its own; the state they need reaches them as a dependency of the app it is mounted in.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from kgrag.service.state import ServiceState


async def service_state(request: Request) -> ServiceState:
    """The state :func:`kgrag.service.app.create_app` keeps on ``app.state.kgrag`` (async: runs on the event loop,
    never on the thread pool the methods run on)."""
    return request.app.state.kgrag


State = Annotated[ServiceState, Depends(service_state)]
