"""Read-only endpoints: health, the KG's schema and counts, the methods and what clients may set,
entity autocomplete and an entity's neighbourhood. None of them runs a method."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from kgrag.errors import UnknownEntityError
from kgrag.service.dependencies import State
from kgrag.service.responses import ApiError, json_response
from kgrag.service.settings import client_may_set

router = APIRouter()
"""The read-only endpoints over the serving app's KG."""


@router.get("/health")
async def health(state: State) -> dict:
    from kgrag.methods import registry

    kg, cfg = state.kg, state.config
    return {
        "status": "ok",
        "kg": state.kg_name(),
        "entities": kg.num_entities,
        "triples": kg.num_triples,
        "methods": list(registry),
        "llm": {"spec": state.llm_spec, "loaded": state.llm_loaded, "max_concurrent_calls": cfg.max_llm_calls},
        "in_flight": state.in_flight,
    }


@router.get("/kg")
async def kg_info(state: State) -> dict:
    import numpy as np

    kg = state.kg
    counts = np.bincount(kg.rels, minlength=kg.num_relations)
    order = np.argsort(-counts, kind="stable")
    stats = {k: v for k, v in state.stats.items() if k != "top_relations"}
    return {
        "name": state.kg_name(),
        "stats": stats,
        "schema": {
            "relations": [{"name": kg.relations[i], "triples": int(counts[i])} for i in order.tolist()],
            "inverse_suffix": "_inv",
        },
    }


@router.get("/methods")
async def methods(state: State) -> dict:
    from kgrag.methods import get as get_method
    from kgrag.methods import registry

    rows = []
    for name in registry:
        cls = get_method(name)
        fields = cls.Config.model_fields
        rows.append(
            {
                "name": name,
                "needs_llm": cls.needs_llm,
                "doc": (cls.__doc__ or "").strip().split("\n\n")[0],
                "settings": {f: _jsonable_default(info.default) for f, info in fields.items()},
                "client_settings": [f for f, info in fields.items() if client_may_set(info)],
            }
        )
    return {"default": state.config.default_method, "methods": rows}


@router.get("/entities")
async def entities(
    state: State,
    q: str = Query(..., min_length=1, max_length=200, description="a partial entity name (or text with tail=1)"),
    k: int = Query(8, ge=1, le=50),
    tail: bool = Query(False, description="complete the name being typed at the end of q"),
) -> dict:
    # not on the method pool: suggestions must keep coming while questions are being answered
    if tail:
        start, found = await asyncio.to_thread(lambda: state.completer.complete_tail(q, k))
    else:
        start, found = 0, await asyncio.to_thread(lambda: state.completer.complete(q, k))
    return {"query": q, "start": start, "entities": [s.as_json() for s in found]}


@router.get("/neighbors")
async def neighbors(
    state: State, entity: str = Query(..., min_length=1, max_length=500), limit: int = Query(25, ge=1, le=200)
) -> Response:
    """Triples around one entity (the web page expands a clicked graph node with these)."""
    from kgrag.retrieval.triples import triples_as_evidence

    kg = state.kg
    try:
        eid = kg.entity_id(entity)
    except UnknownEntityError as exc:
        raise ApiError(404, str(exc)) from None
    import numpy as np

    tids = np.concatenate([kg.out_edge_ids(eid)[:limit], kg.in_edge_ids(eid)[:limit]])[:limit]
    evidence = triples_as_evidence(kg, tids, None, source="neighbors")
    return json_response({"entity": kg.entities[eid], "evidence": [ev.model_dump() for ev in evidence]})


def _jsonable_default(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)
