"""Run routes: estimate, launch, list, read, cancel, series, usage. Each calls one service function."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from api.deps import BodyDep, Caller, caller
from api.openapi import body, responses
from api.estimate_schemas import Estimate
from api.run_schemas import Cancelled, Launched, RunList, RunOne
from api.series_schemas import BatchOne
from api.transcript_schemas import Decisions, Transcript
from api.usage_schemas import Usage
from orchestrator.runs import service, usage
from orchestrator.runs.admission.body import RunBody
from orchestrator.runs.pages import decisions, transcript
from orchestrator.runs.series import read as series

# Writes are sync (launch and cancel wait on the write lock, cancel on the worker too), and so are reads
# that open archive files. Reading a run or a page of runs is one indexed SQLite
# read: async, on the event loop, it skips FastAPI's two threadpool hops (the endpoint's, then the
# return value's validation), measured 0.4-0.9 ms of a 2-4 ms poll, interleaved A/B. The reads clients
# poll answer a JSONResponse of their body, which is plain JSON already: FastAPI's jsonable_encoder
# would otherwise walk every field of every roster seat and result on each poll.
router = APIRouter(prefix="/api/v1")
Reader = Annotated[Caller, Depends(caller(service.READ))]
Writer = Annotated[Caller, Depends(caller(service.WRITE, write=True))]


TRANSCRIPT_PARAMS = {"parameters": [
    {"name": "seat", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 0},
     "description": "only this roster seat's turns"},
    {"name": "limit", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 1, "maximum": 500},
     "description": "page size, default 100"},
    {"name": "cursor", "in": "query", "required": False, "schema": {"type": "string", "pattern": "^[0-9]{1,9}$"},
     "description": "next_cursor of the previous page"},
]}


@router.post("/runs/estimate", responses=responses({200: Estimate}), openapi_extra=body(RunBody),
             summary="Estimate a run or series: the launch's own checks, nothing queued")
def estimate(c: Reader, raw: BodyDep):
    return service.estimate(c.core, c.principal, raw)


@router.post("/runs", status_code=201, responses=responses({201: Launched}), openapi_extra=body(RunBody),
             summary="Launch a run, or a series when trials > 1 (not idempotent)")
def launch(c: Writer, raw: BodyDep) -> JSONResponse:
    return JSONResponse(service.launch(c.core, c.principal, raw), status_code=201)


def _param(name: str, schema: dict, description: str) -> dict:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


# The query reaches the service raw, as MCP's list_runs arguments do, so both answer the same
# message for the same bad value; the document still states what is accepted.
LIST_PARAMS = {"parameters": [
    _param("status", {"enum": list(service.STATUSES)}, "only runs in this state"),
    _param("scenario_id", {"type": "string"}, "only runs of this scenario"),
    _param("batch_id", {"type": "string"}, "only the runs of this series"),
    _param("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "page size, default 20"),
    _param("cursor", {"type": "string", "pattern": "^[0-9]{1,18}$"}, "next_cursor of the previous page"),
]}


@router.get("/runs", responses=responses({200: RunList}), openapi_extra=LIST_PARAMS,
            summary="List runs, newest first")
async def list_runs(c: Reader, request: Request) -> JSONResponse:
    q = request.query_params
    return JSONResponse(service.list_runs(c.core, c.principal, status=q.get("status"),
                                          scenario_id=q.get("scenario_id"), batch_id=q.get("batch_id"),
                                          limit=q.get("limit"), cursor=q.get("cursor")))


@router.get("/runs/{id}", responses=responses({200: RunOne}), summary="A run and its results (null until archived)")
async def get_run(id: str, c: Reader) -> JSONResponse:
    return JSONResponse(service.get_run(c.core, c.principal, id))


@router.get("/runs/{id}/transcript", responses=responses({200: Transcript}), openapi_extra=TRANSCRIPT_PARAMS,
            summary="Every model turn of the run's match: raw reply, actions, refusals, latency, tokens")
def get_transcript(id: str, c: Reader, request: Request):
    q = request.query_params
    return transcript.get_transcript(c.core, c.principal, id, seat=q.get("seat"), cursor=q.get("cursor"),
                                     limit=q.get("limit"))


@router.get("/runs/{id}/decisions", responses=responses({200: Decisions}), openapi_extra=TRANSCRIPT_PARAMS,
            summary="Every graded decision of the run's seats: the turn taken, the best candidate, regret, label")
def get_decisions(id: str, c: Reader, request: Request):
    q = request.query_params
    return decisions.get_decisions(c.core, c.principal, id, seat=q.get("seat"), cursor=q.get("cursor"),
                                   limit=q.get("limit"))


@router.post("/runs/{id}/cancel", responses=responses({200: Cancelled}), summary="Cancel a run")
def cancel(id: str, c: Writer):
    return service.cancel(c.core, c.principal, id)


BATCH_PARAMS = {"parameters": [
    _param("wait_ms", {"type": "integer", "minimum": 0, "maximum": series.MAX_WAIT_MS},
           "a long-poll (this service's addition): answer once a run of the series changes status, or after "
           "wait_ms, at once when no run is left to play; default 0"),
]}


# Async: the series' state is one index-only read and its summary is kept, so the read stays on the event
# loop; a long-poll holds no thread, and a summary to compute (a run of the series ended) goes to one.
# The body goes out as it is: FastAPI's encoder would walk every interval of the summary on each read, and
# the summary's JSON text is kept with it.
@router.get("/batches/{id}", responses=responses({200: BatchOne}), openapi_extra=BATCH_PARAMS,
            summary="A series: its runs, their states and per-seat summary; wait_ms to wait for a change")
async def get_batch(id: str, c: Reader, request: Request) -> Response:
    return Response(await series.follow_series_json(c.core, c.principal, id, request.query_params.get("wait_ms")),
                    media_type="application/json")


@router.get("/usage", responses=responses({200: Usage}), summary="Spend by month, model and run; allowances")
def get_usage(c: Reader):
    return usage.usage(c.core, c.principal)
