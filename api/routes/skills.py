"""Skill routes: built-ins readable by all, own skills private to the account."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from api.deps import BodyDep, CoreDep, scoped
from api.openapi import body, responses
from api.schemas import Deleted, SkillCreated, SkillList, SkillOne
from orchestrator import skills
from orchestrator.auth import Principal
from orchestrator.skills import SkillBody, SkillPatch

router = APIRouter(prefix="/api/v1")
Reader = Annotated[Principal, Depends(scoped(skills.READ))]
Writer = Annotated[Principal, Depends(scoped(skills.WRITE, write=True))]


@router.get("/skills", responses=responses({200: SkillList}), summary="List built-in and own skills")
def list_skills(p: Reader, core: CoreDep) -> dict:
    return skills.list_skills(core, p)


@router.post("/skills", status_code=201, responses=responses({201: SkillCreated}), openapi_extra=body(SkillBody),
             summary="Create a skill")
def create(p: Writer, core: CoreDep, raw: BodyDep) -> dict:
    return skills.create(core, p, raw)


@router.get("/skills/{id}", responses=responses({200: SkillOne}), summary="Get a skill (builtin:... or usk_...)")
def get_one(id: str, p: Reader, core: CoreDep) -> dict:
    return skills.get(core, p, id)


@router.put("/skills/{id}", responses=responses({200: SkillOne}), openapi_extra=body(SkillPatch),
            summary="Update an own skill")
def update(id: str, p: Writer, core: CoreDep, raw: BodyDep) -> dict:
    return skills.update(core, p, id, raw)


@router.delete("/skills/{id}", responses=responses({200: Deleted}), summary="Delete an own skill")
def delete(id: str, p: Writer, core: CoreDep) -> dict:
    return skills.delete(core, p, id)
