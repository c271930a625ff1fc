"""Scenarios: the person's own, written as the API takes them (name, description, season_ticks, env as
JSON), checked live as they type, saved, edited in place and deleted."""
from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

from api.console.pages import Console, ConsoleUser, dead_end, refused
from orchestrator import scenarios
from orchestrator.errors import DomainError

router = APIRouter(include_in_schema=False)
# The env field's example (its placeholder, and the not-JSON message's): fields of the env spec
# (orchestrator/envspec.py), so what the form suggests is what the service takes.
ENV_EXAMPLE = json.dumps({"seed": 7, "actions_per_turn": 2, "resources": {"food": {"regen": 0.5}}})


def _scenarios(user: Console, status: int = 200, **ctx) -> HTMLResponse:
    return user.page("scenarios.html", status=status, own=scenarios.list_scenarios(user.core, user.principal),
                     env_example=ENV_EXAMPLE, **ctx)


def _scenario_body(form) -> dict:
    """Name, description, season_ticks and the env as JSON text, exactly as the API takes them."""
    body: dict = {"name": form.get("name", ""), "description": form.get("description", "")}
    ticks = (form.get("season_ticks") or "").strip()
    if ticks:
        try:
            body["season_ticks"] = int(ticks)
        except ValueError:
            body["season_ticks"] = ticks
    env = (form.get("env") or "").strip()
    if env:
        try:
            body["env"] = json.loads(env)
        except ValueError as e:
            raise DomainError("bad_env", f"env is not JSON ({e}); write a JSON object such as {ENV_EXAMPLE}") from None
    return body


def _field_of(e: DomainError) -> str:
    """Which builder field a refusal is about, so its message shows beside that field."""
    field = {"bad_season_ticks": "season_ticks", "bad_env": "env"}.get(e.code)
    if field is None:
        field = "description" if "description" in e.message.split(":")[0] else "name"
    return field


@router.get("/console/scenarios")
async def scenarios_page(user: ConsoleUser):
    return _scenarios(user)


# before /console/scenarios/{scenario_id}: the first matching route wins
@router.post("/console/scenarios/validate")
async def scenario_validate(user: ConsoleUser):
    """The builder's live check: the API's validate function, answered as a fragment per keystroke pause."""
    form = await user.form()
    try:
        got = scenarios.validate(user.core, user.principal, _scenario_body(form))
    except DomainError as e:
        return user.page("scenario_check.html", field=_field_of(e), message=e.message)
    return user.page("scenario_check.html", got=got)


@router.post("/console/scenarios")
async def scenario_save(user: ConsoleUser):
    form = await user.form()
    try:
        await asyncio.to_thread(scenarios.create, user.core, user.principal, _scenario_body(form))
    except DomainError as e:
        return refused(e, _scenarios, user, form=form, field=_field_of(e), field_error=e.message)
    return RedirectResponse("/console/scenarios", status_code=303)


@router.get("/console/scenarios/{scenario_id}/edit")
async def scenario_edit(user: ConsoleUser, scenario_id: str):
    try:
        sc = scenarios.get(user.core, user.principal, scenario_id)["scenario"]
    except DomainError as e:
        return dead_end(user, e)
    form = {"name": sc["name"], "description": sc["description"], "season_ticks": str(sc["season_ticks"]),
            "env": json.dumps(sc["env"], indent=2) if sc["env"] else ""}
    return _scenarios(user, form=form, editing=sc)


@router.post("/console/scenarios/{scenario_id}")
async def scenario_update(user: ConsoleUser, scenario_id: str):
    """The API's PUT with every field of the form: an emptied env clears it rather than keeping it."""
    form = await user.form()
    try:
        current = scenarios.get(user.core, user.principal, scenario_id)["scenario"]
        body = _scenario_body(form)
        body.setdefault("env", {})
        await asyncio.to_thread(scenarios.update, user.core, user.principal, scenario_id, body)
    except DomainError as e:
        if e.code == "unknown_scenario":
            return dead_end(user, e)
        return refused(e, _scenarios, user, form=form, editing=current, field=_field_of(e), field_error=e.message)
    return RedirectResponse("/console/scenarios", status_code=303)


@router.post("/console/scenarios/{scenario_id}/delete")
async def scenario_delete(user: ConsoleUser, scenario_id: str):
    await user.form()
    try:
        await asyncio.to_thread(scenarios.delete, user.core, user.principal, scenario_id)
    except DomainError as e:
        return dead_end(user, e)
    return RedirectResponse("/console/scenarios", status_code=303)
