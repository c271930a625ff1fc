"""GET /api/v1/health: whether this head can serve (its store answers), which head it is, whether it
dispatches. No token: load balancers and readiness probes ask it. Kept out of the OpenAPI document,
which describes the service rather than one of its processes."""
from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api.errors import envelope
from orchestrator.errors import DomainError
from orchestrator.store import StoreError

router = APIRouter()


@router.get("/api/v1/health", include_in_schema=False)
async def health(request: Request) -> JSONResponse:
    core, state = request.app.state.core, request.app.state
    try:
        await asyncio.to_thread(core.store.ping)
    except StoreError as e:
        return envelope(DomainError("unavailable", f"this head cannot reach its store ({e}); another head "
                                    "may serve: retry in a few seconds", retry_after_s=5))
    duty = getattr(state, "duty", None)
    return JSONResponse({"status": "ok", "head": state.head, "dispatching": duty is not None and duty.dispatching,
                         "store": core.store.dialect})
