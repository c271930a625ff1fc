"""Scenario routes: the schema, the library, validate and CRUD. Each calls one service function."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from api.deps import BodyDep, CoreDep, scoped
from api.openapi import body, responses
from api.schemas import (JSON_SCHEMA_DOC, AnchorListing, Deleted, LibraryList, ScenarioCreated, ScenarioList,
                         ScenarioOne, Validated)
from orchestrator import catalog, scenarios
from orchestrator.auth import Principal
from orchestrator.scenarios import ScenarioBody, ScenarioPatch

router = APIRouter(prefix="/api/v1")
Reader = Annotated[Principal, Depends(scoped(scenarios.READ))]
Writer = Annotated[Principal, Depends(scoped(scenarios.WRITE, write=True))]


@router.get("/scenarios/schema", responses=responses({200: JSON_SCHEMA_DOC}), summary="Scenario JSON Schema")
def get_schema(p: Reader) -> dict:
    return catalog.scenario_schema(p)


@router.get("/library/scenarios", responses=responses({200: LibraryList}), summary="Library scenarios")
def get_library(p: Reader) -> dict:
    return catalog.library_scenarios(p)


@router.get("/library/anchors", responses=responses({200: AnchorListing}), summary="Anchor listing")
def get_anchors(p: Reader) -> dict:
    return catalog.anchor_listing(p)


@router.post("/scenarios/validate", responses=responses({200: Validated}), openapi_extra=body(ScenarioBody),
             summary="Validate a scenario definition")
def validate(p: Reader, core: CoreDep, raw: BodyDep) -> dict:
    return scenarios.validate(core, p, raw)


@router.get("/scenarios", responses=responses({200: ScenarioList}), summary="List scenarios, newest first")
def list_scenarios(p: Reader, core: CoreDep) -> dict:
    return scenarios.list_scenarios(core, p)


@router.post("/scenarios", status_code=201, responses=responses({201: ScenarioCreated, 200: ScenarioCreated}),
             openapi_extra=body(ScenarioBody), summary="Create a scenario (idempotent on name and hash)")
def create(p: Writer, core: CoreDep, raw: BodyDep) -> JSONResponse:
    created, result = scenarios.create(core, p, raw)
    return JSONResponse(result, status_code=201 if created else 200)


@router.get("/scenarios/{id}", responses=responses({200: ScenarioOne}), summary="Get a scenario")
def get_one(id: str, p: Reader, core: CoreDep) -> dict:
    return scenarios.get(core, p, id)


@router.put("/scenarios/{id}", responses=responses({200: ScenarioOne}), openapi_extra=body(ScenarioPatch),
            summary="Update a scenario (omitted fields keep their value)")
def update(id: str, p: Writer, core: CoreDep, raw: BodyDep) -> dict:
    return scenarios.update(core, p, id, raw)


@router.delete("/scenarios/{id}", responses=responses({200: Deleted}), summary="Delete a scenario")
def delete(id: str, p: Writer, core: CoreDep) -> dict:
    return scenarios.delete(core, p, id)
