"""GET /api/v1 (discovery) and GET /api/v1/me."""
from __future__ import annotations

import asyncio
import re

from fastapi import APIRouter, FastAPI, Request

from api.deps import AnyToken
from api.openapi import responses
from api.schemas import Discovery, Me
from orchestrator.me import me as me_view

router = APIRouter()
_PARAM = re.compile(r"{(\w+)}")

AUTH_TEXT = ("Send an access token as 'Authorization: Bearer dsk_...' (or 'x-api-key: dsk_...'). Tokens are minted "
             "by the operator with `studio token mint` and carry scopes scenarios:read, scenarios:write, runs:read, "
             "runs:write. GET /api/v1 and GET /api/v1/openapi.json need no token.")


def endpoint_list(app: FastAPI) -> list[str]:
    """Every operation of the app's OpenAPI document (itself built from the routes), plus the
    document's own route, spelled as the API's table spells them (GET /api/v1/scenarios/:id)."""
    cached = getattr(app.state, "endpoints", None)
    if cached is None:
        cached = [method.upper() + " " + _PARAM.sub(r":\1", path)
                  for path, operations in app.openapi()["paths"].items() for method in operations]
        cached.insert(1 if cached[:1] == ["GET /api/v1"] else 0, f"GET {app.openapi_url}")
        app.state.endpoints = cached
    return cached


async def endpoints(app: FastAPI) -> list[str]:
    """endpoint_list, its first build in a thread: it walks every route's models, which held the event
    loop for a second and more on a busy machine."""
    return getattr(app.state, "endpoints", None) or await asyncio.to_thread(endpoint_list, app)


@router.get("/api/v1", responses=responses({200: Discovery}), summary="Discovery", openapi_extra={"security": []})
async def discovery(request: Request):
    base = str(request.base_url).rstrip("/")
    return {"api": "Scenario Studio", "version": 1, "docs": f"{base}/api/v1/docs",
            "openapi": f"{base}{request.app.openapi_url}", "mcp": f"{base}/mcp/studio", "auth": AUTH_TEXT,
            "endpoints": await endpoints(request.app)}


@router.get("/api/v1/me", responses=responses({200: Me}), summary="The account view")
async def get_me(c: AnyToken):
    return me_view(c.principal)
