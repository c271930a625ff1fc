"""Run routes: estimate, launch, list, read, cancel, batches, usage. Each calls one service function."""
from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from api.deps import BodyDep, Caller, caller
from api.openapi import body, responses
from orchestrator.runs import batches, service, usage
from orchestrator.runs.body import RunBody

# Runs routes are sync: launch and cancel wait on the write lock, cancel on the worker too.
router = APIRouter(prefix="/api/v1")
Reader = Annotated[Caller, Depends(caller(service.READ))]
Writer = Annotated[Caller, Depends(caller(service.WRITE, write=True))]


def _obj(*required: str) -> dict:
    return {"type": "object", "required": list(required)}


RUN = _obj("run_id", "match_id", "name", "status", "scenario_id", "scenario_hash", "batch_id", "created_at_ms",
           "started_at_ms", "finished_at_ms", "live", "links", "error", "effective", "roster", "spend",
           "agent_turns", "stop_reason")
ESTIMATE = {"type": "object", "required": ["ok", "batch"], "properties": {"batch": _obj(
    "trials", "agent_turns", "usd", "wall_clock_ms", "seats", "spend_cap_usd", "quota", "queue", "precision")}}
LAUNCHED = {"type": "object", "required": ["ok", "run", "batch"], "properties": {"run": RUN}}
RUN_ONE = {"type": "object", "required": ["run", "results"], "properties": {"run": RUN}}
RUN_LIST = {"type": "object", "required": ["runs", "next_cursor"], "properties": {"runs": {"type": "array",
                                                                                       "items": RUN}}}
CANCELLED = {"type": "object", "required": ["ok", "cancelled", "run"], "properties": {"run": RUN}}
BATCH = {"type": "object", "required": ["batch"], "properties": {"batch": _obj(
    "batch_id", "status", "trials", "seed_mode", "run_ids", "summary")}}
USAGE = _obj("months", "allowances")


@router.post("/runs/estimate", responses=responses({200: ESTIMATE}), openapi_extra=body(RunBody),
             summary="Estimate a run or series: the launch's own checks, nothing queued")
def estimate(c: Reader, raw: BodyDep) -> dict:
    return service.estimate(c.core, c.principal, raw)


@router.post("/runs", status_code=201, responses=responses({201: LAUNCHED}), openapi_extra=body(RunBody),
             summary="Launch a run, or a series when trials > 1 (not idempotent)")
def launch(c: Writer, raw: BodyDep) -> JSONResponse:
    return JSONResponse(service.launch(c.core, c.principal, raw), status_code=201)


Status = Literal["queued", "launching", "running", "finished", "failed", "cancelled"]


@router.get("/runs", responses=responses({200: RUN_LIST}), summary="List runs, newest first")
def list_runs(c: Reader, status: Status | None = None, scenario_id: str | None = None, batch_id: str | None = None,
              limit: Annotated[int | None, Query(ge=1, le=100)] = None,
              cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None) -> dict:
    return service.list_runs(c.core, c.principal, status=status, scenario_id=scenario_id, batch_id=batch_id,
                             limit=limit, cursor=cursor or None)


@router.get("/runs/{id}", responses=responses({200: RUN_ONE}), summary="A run and its results (null until archived)")
def get_run(id: str, c: Reader) -> dict:
    return service.get_run(c.core, c.principal, id)


@router.post("/runs/{id}/cancel", responses=responses({200: CANCELLED}), summary="Cancel a run")
def cancel(id: str, c: Writer) -> dict:
    return service.cancel(c.core, c.principal, id)


@router.get("/batches/{id}", responses=responses({200: BATCH}), summary="A series: its runs and per-seat summary")
def get_batch(id: str, c: Reader) -> dict:
    return batches.get_batch(c.core, c.principal, id)


@router.get("/usage", responses=responses({200: USAGE}), summary="Spend by month, model and run; allowances")
def get_usage(c: Reader) -> dict:
    return usage.usage(c.core, c.principal)
