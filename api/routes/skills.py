"""Skill routes: built-ins readable by all, own skills private to the account."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from api.deps import BodyDep, Caller, caller
from api.openapi import body, responses
from api.schemas import Deleted, SkillCreated, SkillList, SkillOne
from orchestrator import skills
from orchestrator.skills import SkillBody, SkillPatch

# Async reads, sync writes: see api/routes/scenarios.py.
router = APIRouter(prefix="/api/v1")
Reader = Annotated[Caller, Depends(caller(skills.READ))]
Writer = Annotated[Caller, Depends(caller(skills.WRITE, write=True))]


@router.get("/skills", responses=responses({200: SkillList}), summary="List built-in and own skills")
async def list_skills(c: Reader):
    return skills.list_skills(c.core, c.principal)


@router.post("/skills", status_code=201, responses=responses({201: SkillCreated}), openapi_extra=body(SkillBody),
             summary="Create a skill")
def create(c: Writer, raw: BodyDep):
    return skills.create(c.core, c.principal, raw)


@router.get("/skills/{id}", responses=responses({200: SkillOne}), summary="Get a skill (builtin:... or usk_...)")
async def get_one(id: str, c: Reader):
    return skills.get(c.core, c.principal, id)


@router.put("/skills/{id}", responses=responses({200: SkillOne}), openapi_extra=body(SkillPatch),
            summary="Update an own skill")
def update(id: str, c: Writer, raw: BodyDep):
    return skills.update(c.core, c.principal, id, raw)


@router.delete("/skills/{id}", responses=responses({200: Deleted}), summary="Delete an own skill")
def delete(id: str, c: Writer):
    return skills.delete(c.core, c.principal, id)
