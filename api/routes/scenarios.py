"""Scenario routes: the schema, the library, validate and CRUD. Each calls one service function."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from api.deps import BodyDep, Caller, caller
from api.openapi import body, responses
from api.schemas import (AnchorListing, Deleted, LibraryList, ScenarioCreated, ScenarioList,
                         ScenarioOne, ScenarioSchema, Validated)
from orchestrator import listing, scenarios
from orchestrator.scenarios import ScenarioBody, ScenarioPatch

# GET routes are async: their service calls are indexed SQLite reads, cheaper than a threadpool hop.
# Writes stay sync (FastAPI runs them in its threadpool) because they may wait on the write lock.
router = APIRouter(prefix="/api/v1")
Reader = Annotated[Caller, Depends(caller(scenarios.READ))]
Writer = Annotated[Caller, Depends(caller(scenarios.WRITE, write=True))]


@router.get("/scenarios/schema", responses=responses({200: ScenarioSchema}), summary="Scenario JSON Schema")
async def get_schema(c: Reader):
    return listing.scenario_schema(c.principal)


@router.get("/library/scenarios", responses=responses({200: LibraryList}), summary="Library scenarios")
async def get_library(c: Reader):
    return listing.library_scenarios(c.principal)


@router.get("/library/anchors", responses=responses({200: AnchorListing}), summary="Anchor listing")
async def get_anchors(c: Reader):
    return listing.anchor_listing(c.principal)


@router.post("/scenarios/validate", responses=responses({200: Validated}), openapi_extra=body(ScenarioBody),
             summary="Validate a scenario definition")
def validate(c: Reader, raw: BodyDep):
    return scenarios.validate(c.core, c.principal, raw)


@router.get("/scenarios", responses=responses({200: ScenarioList}), summary="List scenarios, newest first")
async def list_scenarios(c: Reader):
    return scenarios.list_scenarios(c.core, c.principal)


@router.post("/scenarios", status_code=201, responses=responses({201: ScenarioCreated, 200: ScenarioCreated}),
             openapi_extra=body(ScenarioBody), summary="Create a scenario (idempotent on name and hash)")
def create(c: Writer, raw: BodyDep) -> JSONResponse:
    created, result = scenarios.create(c.core, c.principal, raw)
    return JSONResponse(result, status_code=201 if created else 200)


@router.get("/scenarios/{id}", responses=responses({200: ScenarioOne}), summary="Get a scenario")
async def get_one(id: str, c: Reader):
    return scenarios.get(c.core, c.principal, id)


@router.put("/scenarios/{id}", responses=responses({200: ScenarioOne}), openapi_extra=body(ScenarioPatch),
            summary="Update a scenario (omitted fields keep their value)")
def update(id: str, c: Writer, raw: BodyDep):
    return scenarios.update(c.core, c.principal, id, raw)


@router.delete("/scenarios/{id}", responses=responses({200: Deleted}), summary="Delete a scenario")
def delete(id: str, c: Writer):
    return scenarios.delete(c.core, c.principal, id)
