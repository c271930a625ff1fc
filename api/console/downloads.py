"""A run's or a series' files in the console (the run and series pages' download buttons): the same
service functions as GET /api/v1/runs/:id/export and /batches/:id/export, and as their /bundle
paths, for the signed-in owner."""
from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import Response

from api.console.pages import ConsoleUser, dead_end
from orchestrator.errors import DomainError
from orchestrator.runs import bundle, exports

router = APIRouter(include_in_schema=False)


async def _download(user, id: str, fmt: str | None) -> Response:
    try:
        out = await asyncio.to_thread(exports.export, user.core, user.principal, id, fmt, default="inspect")
    except DomainError as e:
        return dead_end(user, e)
    return Response(out.data, media_type=out.media_type,
                    headers={"Content-Disposition": f'attachment; filename="{out.filename}"'})


@router.get("/console/runs/{run_id}/export")
async def run_download(user: ConsoleUser, run_id: str, format: str | None = None):
    return await _download(user, run_id, format)


@router.get("/console/batches/{batch_id}/export")
async def series_download(user: ConsoleUser, batch_id: str, format: str | None = None):
    return await _download(user, batch_id, format)


async def _bundle(user, id: str) -> Response:
    try:
        data = await asyncio.to_thread(bundle.of, user.core, user.principal, id)
    except DomainError as e:
        return dead_end(user, e)
    return Response(data, media_type=bundle.MEDIA_TYPE,
                    headers={"Content-Disposition": f'attachment; filename="{bundle.filename(id)}"'})


@router.get("/console/runs/{run_id}/bundle")
async def run_bundle(user: ConsoleUser, run_id: str):
    return await _bundle(user, run_id)


@router.get("/console/batches/{batch_id}/bundle")
async def series_bundle(user: ConsoleUser, batch_id: str):
    return await _bundle(user, batch_id)
