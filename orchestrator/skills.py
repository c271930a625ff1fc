"""Skills: the six built-ins (readable by every account, never editable) and each account's own."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from engine.skills import BUILTIN_SKILLS
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.ids import new_id
from orchestrator.records.skill import Skill
from orchestrator.store import Connection, skills as stored
from orchestrator.validation import PLAIN_TEXT, StrictModel, parse

READ, WRITE = "scenarios:read", "scenarios:write"
NAME_CHARS, TEXT_CHARS = (2, 60), (10, 2000)
CODES = {"name": "bad_skill", "text": "bad_skill"}
HINTS = {"name": f"send a string of {NAME_CHARS[0]} to {NAME_CHARS[1]} characters",
         "text": f"send a string of {TEXT_CHARS[0]} to {TEXT_CHARS[1]} characters"}

SkillName = Annotated[str, Field(min_length=NAME_CHARS[0], max_length=NAME_CHARS[1], pattern=PLAIN_TEXT)]
SkillText = Annotated[str, Field(min_length=TEXT_CHARS[0], max_length=TEXT_CHARS[1])]


class SkillBody(StrictModel):
    name: SkillName
    text: SkillText


class SkillPatch(StrictModel):
    name: SkillName = None
    text: SkillText = None


def view(skill: Skill) -> dict:
    return skill.view()


def _own(c: Connection, principal: Principal, skill_id: str) -> Skill:
    row = stored.own(c, skill_id, principal.account_id)
    if row is None:
        raise DomainError("unknown_skill", f"no skill {skill_id!r}: not a built-in and not on this account; "
                          "list them with GET /api/v1/skills")
    return row


def _refuse_builtin(skill_id: str) -> None:
    if skill_id in BUILTIN_SKILLS:
        raise DomainError("bad_skill", f"{skill_id} is a built-in skill and cannot be changed or deleted; "
                          "create your own skill with its text instead")


def list_skills(core: Core, principal: Principal) -> dict:
    require(principal, READ)
    mine = stored.of_account(core.store.conn(), principal.account_id)
    return {"builtin": [dict(s) for s in BUILTIN_SKILLS.values()], "mine": [view(s) for s in mine],
            "limits": {"name_chars": list(NAME_CHARS), "text_chars": list(TEXT_CHARS),
                       "saved_skills": principal.plan["saved_skills"]}}


def get(core: Core, principal: Principal, skill_id: str) -> dict:
    require(principal, READ)
    if skill_id in BUILTIN_SKILLS:
        return {"skill": dict(BUILTIN_SKILLS[skill_id])}
    return {"skill": view(_own(core.store.conn(), principal, skill_id))}


def create(core: Core, principal: Principal, body: Any) -> dict:
    require(principal, WRITE, write=True)
    skill = parse(SkillBody, body, codes=CODES, hints=HINTS)
    allowance = principal.plan["saved_skills"]
    with core.store.write() as c:
        if stored.count(c, principal.account_id) >= allowance:
            raise DomainError("too_many_skills", f"the {principal.plan['name']} plan allows {allowance} saved skills "
                              "and all are in use; delete one first")
        row = Skill(id=new_id("usk_"), account_id=principal.account_id, name=skill.name, text=skill.text,
                    created_at_ms=core.clock.now_ms(), updated_at_ms=None)
        stored.insert(c, row)
    return {"ok": True, "skill": view(row)}


def update(core: Core, principal: Principal, skill_id: str, body: Any) -> dict:
    require(principal, WRITE, write=True)
    _refuse_builtin(skill_id)
    patch = parse(SkillPatch, body, codes=CODES, hints=HINTS).model_dump(exclude_unset=True)
    with core.store.write() as c:
        row = _own(c, principal, skill_id)
        row = Skill(**{**row.model_dump(), **patch, "updated_at_ms": core.clock.now_ms()})
        stored.replace(c, row)
    return {"skill": view(row)}


def delete(core: Core, principal: Principal, skill_id: str) -> dict:
    require(principal, WRITE, write=True)
    _refuse_builtin(skill_id)
    with core.store.write() as c:
        _own(c, principal, skill_id)
        stored.delete(c, skill_id)
    return {"ok": True, "deleted": skill_id}


def resolve(core: Core, principal: Principal, skill_id: str) -> dict:
    """{id, name, text} of a skill the account can see, for a seat at launch (runs issue)."""
    if skill_id in BUILTIN_SKILLS:
        s = BUILTIN_SKILLS[skill_id]
    else:
        s = view(_own(core.store.conn(), principal, skill_id))
    return {"id": s["id"], "name": s["name"], "text": s["text"]}
