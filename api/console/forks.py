"""Forks in the console (CONTRACT.md section 16): "Fork from this tick" on a match's replay page and on a
transcript turn opens the run builder with the fork filled in: the original's seats, each of which may
be handed to another player, trials, and a control arm. Estimate and launch are the REST body's, through
the same service functions."""
from __future__ import annotations


from fastapi import APIRouter
from fastapi.responses import RedirectResponse

from api.console.pages import Console, ConsoleUser, dead_end, estimate, launch, not_found, number, until
from orchestrator.errors import DomainError
from orchestrator.runs import service as runs_service
from orchestrator.runs.series import until as until_body

router = APIRouter(include_in_schema=False)


def _fork_body(form: dict) -> dict:
    """The fork builder's fields -> the run body; a seat row with a model is a seat handed over."""
    seats = {}
    for key in form:
        if key.startswith("seat") and key.endswith("_model") and (form[key] or "").strip():
            k = key[len("seat"):-len("_model")]
            seat = {"model": form[key].strip()}
            provider = (form.get(f"seat{k}_provider") or "").strip()
            if provider:
                seat["provider"] = provider
            seats[k] = seat
    fork = {"run_id": form.get("fork_run", ""), "tick": number((form.get("tick") or "").strip())}
    if seats:
        fork["seats"] = seats
    if form.get("control"):
        fork["control"] = True
    body: dict = {"fork": fork}
    for field in ("name", "trials", "max_spend_usd", "budget_usd"):
        value = (form.get(field) or "").strip()
        if value:
            body[field] = value if field == "name" else number(value)
    return body | until(form)


def _builder(user: Console, run: dict, status: int = 200, form=None, **ctx):
    return user.page("run_fork.html", status=status, run=run, form=form or {}, until_metrics=until_body.METRICS,
                     **ctx)


@router.get("/console/runs/{run_id}/fork")
async def fork_builder(user: ConsoleUser, run_id: str, tick: str = "1"):
    try:
        run = runs_service.get_run(user.core, user.principal, run_id)["run"]
    except DomainError as e:
        return dead_end(user, e)
    return _builder(user, run, form={"tick": tick})


@router.get("/console/matches/{match_id}/fork")
async def fork_match(user: ConsoleUser, match_id: str, tick: str = "1"):
    """The public replay page knows the match, not the run: the owner's run of it, else not found."""
    run_id = runs_service.run_of_match(user.core, user.principal, match_id)
    if run_id is None:
        return not_found(user.request, user.session, f"There is no run of match {match_id} on this account.")
    return RedirectResponse(f"/console/runs/{run_id}/fork?tick={number(tick)}", status_code=303)


@router.post("/console/runs/{run_id}/fork/estimate")
async def fork_estimate(user: ConsoleUser, run_id: str):
    return await estimate(user, runs_service.estimate, _fork_body)


@router.post("/console/runs/{run_id}/fork")
async def fork_launch(user: ConsoleUser, run_id: str):
    run = runs_service.get_run(user.core, user.principal, run_id)["run"]
    return await launch(user, runs_service.launch, _fork_body,
                        lambda user, status=200, form=None, **ctx: _builder(user, run, status, form, **ctx))
