"""Runs: the list, the builder (estimate, launch), a run's page with its live block over server-sent
events, and cancelling. A series' page is api/console/series.py."""
from __future__ import annotations

import asyncio
import json
import re

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse

from api.console.pages import (STOP_POLLING, TEMPLATES, Console, ConsoleUser, dead_end, estimate, launch, number,
                               scenario_choices, then_end, turn_timeout, until)
from engine.rules import POLICIES, WORLD
from orchestrator.seats import keys
from orchestrator.errors import DomainError
from orchestrator.provider_kinds import LOCAL
from orchestrator.grading import read as decisions
from orchestrator.runs import service as runs_service
from orchestrator.statuses import TERMINAL, TERMINAL as ENDED
from orchestrator.runs.series import read as series, until as until_body
from orchestrator.runs.admission.admit import spend_cap
from orchestrator.seats.prices import VENDOR, PriceTable

router = APIRouter(include_in_schema=False)
SEAT_ROWS = 2  # rows shown on a new builder; the person adds more up to the plan's seats
_SEAT_FIELD = re.compile(r"seat(\d{1,3})_model")


@router.get("/console/runs")
async def runs_page(user: ConsoleUser):
    runs = runs_service.list_runs(user.core, user.principal, limit="100")["runs"]
    if user.request.headers.get("hx-request"):
        return user.page("runs_rows.html", runs=runs)
    return user.page("runs.html", runs=runs)


# --- the builder: before /console/runs/{run_id}, as the first matching route wins ----------------

def _seat_indexes(form) -> list[int]:
    return sorted(int(m.group(1)) for m in map(_SEAT_FIELD.fullmatch, form.keys()) if m)


def _model_choices(user: Console) -> list[dict]:
    """The models a seat of this account can name, for the builder's list: the scripted policies, every
    priced model through a router key, a vendor's own through its key, and what the platform sponsors.
    A suggestion only: any model id may be typed (a self-hosted one, a newer one)."""
    out = [{"model": f"local/{p}", "provider": LOCAL} for p in POLICIES]
    priced = PriceTable.shipped().models
    for provider in keys.held(user.core, user.principal.account_id):
        if provider == "router":
            out += [{"model": m, "provider": provider} for m in priced]
        elif provider in VENDOR:
            out += [{"model": m.split("/", 1)[1], "provider": provider} for m in priced
                    if m.startswith(VENDOR[provider] + "/")]
    for provider, key in keys.held(user.core, keys.PLATFORM).items():
        out += [{"model": m, "provider": provider, "sponsored": True} for m in key["models"] or []]
    return out


def _builder(user: Console, status: int = 200, form=None, **ctx) -> HTMLResponse:
    rows = range(max(len(_seat_indexes(form)), 1)) if form else range(SEAT_ROWS)
    defaults = {"turn_timeout_ms": WORLD["turn_timeout_ms"], "actions_per_turn": WORLD["actions_per_turn"],
                "max_spend_usd": spend_cap(user.principal, None)}
    return user.page("run_new.html", status=status, scenarios=scenario_choices(user), seat_rows=rows,
                     max_seats=user.principal.plan["seats_per_run"], form=form, until_metrics=until_body.METRICS,
                     models=_model_choices(user), defaults=defaults, **ctx)


def _run_body(form) -> dict:
    """The builder's fields -> the REST body; empty fields are left out so the service's defaults apply.
    Numbers are passed on as typed when they parse, else as text so the service names the field."""
    body: dict = {"scenario_id": form.get("scenario_id", "")}
    for field in ("name", "season_ticks", "trials", "seed_mode", "max_spend_usd", "budget_usd", "grading",
                  "paired_with"):
        value = (form.get(field) or "").strip()
        if value:
            body[field] = value if field in ("name", "seed_mode", "grading", "paired_with") else number(value)
    body.update(until(form))
    roster = []
    for k in _seat_indexes(form):
        model = (form.get(f"seat{k}_model") or "").strip()
        if not model:
            continue
        seat: dict = {"model": model}
        for field in ("provider", "name", "instructions", "format", "reasoning"):
            value = (form.get(f"seat{k}_{field}") or "").strip()
            if value:
                seat[field] = value
        for field in ("temperature", "max_tokens"):
            value = (form.get(f"seat{k}_{field}") or "").strip()
            if value:
                seat[field] = number(value)
        skills = [x.strip() for x in (form.get(f"seat{k}_skills") or "").split(",") if x.strip()]
        if skills:
            seat["skills"] = skills
        roster.append(seat)
    body["roster"] = roster
    return turn_timeout(form, body)


@router.get("/console/runs/new")
async def run_builder(user: ConsoleUser):
    return _builder(user)


@router.post("/console/runs/estimate")
async def run_estimate(user: ConsoleUser):
    return await estimate(user, runs_service.estimate, _run_body)


@router.post("/console/runs/new")
async def run_launch(user: ConsoleUser):
    return await launch(user, runs_service.launch, _run_body, _builder)


# --- one run -------------------------------------------------------------------------------------

GRADED_PAGE = 10  # labelled turns a run page lists at a time, worst first


@router.get("/console/runs/{run_id}")
async def run_page(user: ConsoleUser, run_id: str, turns: str | None = None):
    try:
        got = runs_service.get_run(user.core, user.principal, run_id)
    except DomainError as e:
        return dead_end(user, e)
    run = got["run"]
    if user.request.headers.get("hx-request"):  # the live block, polled
        return user.page("run_live.html", status=STOP_POLLING if run["status"] in ENDED else 200,
                         run=run, results=got["results"])
    scenario = next((c["name"] for c in scenario_choices(user) if c["id"] == run["scenario_id"]), None)
    marks = decisions.marked(user.core, run_id) if run["grading"] and run["grading"]["status"] == "done" else []
    start = min(int(turns) if turns and turns.isdigit() else 0, max(0, len(marks) - 1))  # a page's first turn
    return user.page("run.html", run=run, results=got["results"], scenario_name=scenario, marks=marks,
                     trial=_trial_of(user, run), shown=marks[start:start + GRADED_PAGE], start=start,
                     page_size=GRADED_PAGE)


def _trial_of(user: Console, run: dict) -> dict | None:
    """A series' trial: which one it is and how the series drew its seeds, for the seeds' line. A fork
    series with a control arm holds N fork runs then N control runs: trial j of N in either arm."""
    if not run["batch_id"]:
        return None
    state = series.read_state(user.core, user.principal, run["batch_id"])
    index, trials = state.run_ids.index(run["run_id"]), state.batch.trials
    return {"index": index % trials, "trials": trials, "seed_mode": state.batch.seed_mode,
            "batch_seed": state.batch.batch_seed}


@router.get("/console/runs/{run_id}/events")
async def run_events(user: ConsoleUser, run_id: str):
    """Server-sent events: the run's live block each time its tick or status changes; the page polls
    the same fragment when EventSource is not available."""
    request, s = user.request, user.session
    runs_service.get_run(user.core, user.principal, run_id)  # 404 before the stream opens

    async def stream():
        last = None
        while not await request.is_disconnected():
            got = runs_service.get_run(user.core, user.principal, run_id)
            run = got["run"]
            key = json.dumps(run, sort_keys=True, default=str)
            if key != last:
                last = key
                html = TEMPLATES.get_template("run_live.html").render(run=run, results=got["results"], s=s)
                tick = (run["live"] or {}).get("tick", 0)
                data = "".join(f"data: {line}\n" for line in html.splitlines())
                yield f"id: {tick}\nevent: run\n{data}\n"
            if run["status"] in TERMINAL:
                return
            await asyncio.sleep(0.5)
    return StreamingResponse(then_end(stream()), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post("/console/runs/{run_id}/cancel")
async def run_cancel(user: ConsoleUser, run_id: str):
    await user.form()
    try:
        await asyncio.to_thread(runs_service.cancel, user.core, user.principal, run_id)
    except DomainError as e:
        return dead_end(user, e)
    return RedirectResponse(f"/console/runs/{run_id}", status_code=303)
