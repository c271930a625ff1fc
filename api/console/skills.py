"""Skills: the person's own texts to hand a seat, created, replaced and deleted through the API's functions."""
from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

from api.console.pages import Console, ConsoleUser, refused
from orchestrator import skills
from orchestrator.errors import DomainError

router = APIRouter(include_in_schema=False)


def _skills(user: Console, status: int = 200, error: str | None = None, form: dict | None = None) -> HTMLResponse:
    return user.page("skills.html", status=status, error=error, form=form,
                     listing=skills.list_skills(user.core, user.principal))


@router.get("/console/skills")
async def skills_page(user: ConsoleUser):
    return _skills(user)


@router.post("/console/skills")
async def skill_save(user: ConsoleUser):
    """Create, or replace the text of one of yours when `skill_id` is sent: the API's create/update."""
    form = await user.form()
    body = {"name": form.get("name", ""), "text": form.get("text", "")}
    try:
        if form.get("skill_id"):
            await asyncio.to_thread(skills.update, user.core, user.principal, form["skill_id"], body)
        else:
            await asyncio.to_thread(skills.create, user.core, user.principal, body)
    except DomainError as e:
        return refused(e, _skills, user, form=form)
    return RedirectResponse("/console/skills", status_code=303)


@router.post("/console/skills/{skill_id}/delete")
async def skill_delete(user: ConsoleUser, skill_id: str):
    await user.form()
    try:
        await asyncio.to_thread(skills.delete, user.core, user.principal, skill_id)
    except DomainError as e:
        return refused(e, _skills, user)
    return RedirectResponse("/console/skills", status_code=303)
