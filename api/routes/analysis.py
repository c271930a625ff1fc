"""Analysis routes: the leaderboard of a scenario, paired comparisons of two series, a run's or a series'
export. Each calls one service function of the runs package (analysis, exports), as the MCP tools do."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from api.deps import Caller, caller
from api.openapi import responses
from api.analysis_schemas import ComparisonAnswer, LeaderboardAnswer
from orchestrator.errors import DomainError
from orchestrator.runs import analysis, bundle, exports, service

router = APIRouter(prefix="/api/v1")
Reader = Annotated[Caller, Depends(caller(service.READ))]


def _param(name: str, schema: dict, description: str, required: bool = False) -> dict:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": description}


@router.get("/leaderboard", responses=responses({200: LeaderboardAnswer}), openapi_extra={"parameters": [
    _param("scenario_id", {"type": "string", "minLength": 1},
           "the scenario whose ended runs are ranked; required unless game is given"),
    _param("game", {"enum": list(analysis.GAME_IDS)}, "rank every scenario of one game (world or an arena game); "
           "default: the scenario's game"),
    _param("by", {"enum": ["model", "name"]}, "rank models (provider and model) or seat names; default model"),
    _param("resamples", {"type": "integer", "minimum": 100, "maximum": analysis.MAX_RESAMPLES},
           "bootstrap resamples for the intervals, default 1000")]},
    summary="Bradley-Terry leaderboard of a scenario, or of one game, over your ended runs")
def leaderboard(c: Reader, request: Request):
    q = request.query_params
    return analysis.leaderboard(c.core, c.principal, scenario_id=q.get("scenario_id"), by=q.get("by"),
                                resamples=q.get("resamples"), game=q.get("game"))


SEAT = {"type": "integer", "minimum": 0, "maximum": analysis.MAX_SEAT}


@router.get("/compare", responses=responses({200: ComparisonAnswer}), openapi_extra={"parameters": [
    _param("batch_a", {"type": "string", "minLength": 1}, "a series' batch_id", True),
    _param("batch_b", {"type": "string", "minLength": 1},
           "another series' batch_id (launch it with paired_with: batch_a)", True),
    _param("seat", SEAT, "the seat of batch_a, default 0"),
    _param("seat_b", SEAT, "the seat of batch_b, default the same as seat"),
    _param("metric", {"enum": list(analysis.METRICS)}, "default fitness_index")]},
    summary="One seat under two series, paired on the seeds both played")
def compare(c: Reader, request: Request):
    q = request.query_params
    return analysis.compare(c.core, c.principal, batch_a=q.get("batch_a"), batch_b=q.get("batch_b"),
                            seat=q.get("seat"), seat_b=q.get("seat_b"), metric=q.get("metric"))


_EXPORTED = responses({200: {
    "text/csv": {"type": "string"}, "application/vnd.apache.parquet": {"type": "string", "format": "binary"},
    "application/zip": {"type": "string", "format": "binary",
                        "description": "format=inspect: an Inspect AI log (.eval), docs/FORMATS.md"}}})
_FORMAT = {"parameters": [_param("format", {"enum": list(exports.FORMATS)},
                                 "csv (default: one row per agent per match), parquet (the same rows), or inspect "
                                 "(an Inspect AI .eval log: one sample per seat and trial)")]}


def _file(out: exports.Export) -> Response:
    return Response(out.data, media_type=out.media_type,
                    headers={"Content-Disposition": f'attachment; filename="{out.filename}"'})


@router.get("/runs/{id}/export", response_class=Response, responses=_EXPORTED, openapi_extra=_FORMAT,
            summary="A run's results as CSV or Parquet, or the run as an Inspect AI log (owner only)")
def export_run(id: str, c: Reader, request: Request) -> Response:
    if id.startswith("bat_"):  # the run path takes runs only; a series has its own
        raise DomainError("unknown_run", f"no run '{id}' on this account; export a series at /api/v1/batches/{id}/export")
    return _file(exports.export(c.core, c.principal, id, request.query_params.get("format")))


@router.get("/batches/{id}/export", response_class=Response, responses=_EXPORTED, openapi_extra=_FORMAT,
            summary="A series' results, one row per agent per match, as CSV or Parquet, or as an Inspect AI log")
def export(id: str, c: Reader, request: Request) -> Response:
    if not id.startswith("bat_"):
        raise DomainError("unknown_run", f"no series '{id}' on this account; a series answers its batch_id at launch")
    return _file(exports.export(c.core, c.principal, id, request.query_params.get("format")))


_BUNDLED = responses({200: {"application/zip": {
    "type": "string", "format": "binary",
    "description": "a result bundle (manifest.json and every recorded turn), docs/FORMATS.md; `studio verify` "
                   "checks it offline"}}})


def _bundle(c: Caller, id: str, data: bytes | None = None) -> Response:
    data = bundle.of(c.core, c.principal, id) if data is None else data
    return Response(data, media_type=bundle.MEDIA_TYPE,
                    headers={"Content-Disposition": f'attachment; filename="{bundle.filename(id)}"'})


@router.get("/runs/{id}/bundle", response_class=Response, responses=_BUNDLED,
            summary="A run as a result bundle anyone can verify offline (owner only; ended runs)")
def bundle_run(id: str, c: Reader) -> Response:
    if id.startswith("bat_"):
        raise DomainError("unknown_run", f"no run '{id}' on this account; a series' bundle is at "
                          f"/api/v1/batches/{id}/bundle")
    return _bundle(c, id)


@router.get("/batches/{id}/bundle", response_class=Response, responses=_BUNDLED,
            summary="A series as a result bundle anyone can verify offline (owner only; every trial ended)")
def bundle_batch(id: str, c: Reader) -> Response:
    if not id.startswith("bat_"):
        raise DomainError("unknown_batch", f"no series '{id}' on this account; a series answers its batch_id "
                          "at launch")
    return _bundle(c, id)


@router.get("/matches/{id}/bundle", response_class=Response, responses=_BUNDLED,
            summary="The result bundle of the run that played a match: a public report's link (owner only)")
def bundle_match(id: str, c: Reader) -> Response:
    run_id, data = bundle.of_match(c.core, c.principal, id)
    return _bundle(c, run_id, data)
