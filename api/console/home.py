"""The dashboard (the latest runs, a series' trials under their series, and the plan's allowances), the
series index, and the usage page."""
from __future__ import annotations

import asyncio

from fastapi import APIRouter

from api.console.pages import ConsoleUser, scenario_names, series_title
from orchestrator.runs import service as runs_service
from orchestrator.runs.series import read as series
from orchestrator.runs.usage import usage as usage_of

router = APIRouter(include_in_schema=False)
RECENT = 10  # rows on the dashboard: a run, or a series with its trials
SCANNED = 100  # the newest runs read to fill them (a series' trials count once)
SERIES_PAGE = 100  # series on the index, newest first


def _recent(runs: list[dict], heads: dict[str, dict], names: dict[str, str]) -> list[dict]:
    """The newest entries: a run on its own, or a series (its progress and the trials read) in the
    place of its newest trial."""
    out: list[dict] = []
    where: dict[str, dict] = {}
    for r in runs:
        b = r["batch_id"]
        if b and b in where:
            where[b]["trials"].append(r)
            continue
        if len(out) >= RECENT:
            continue
        if b:
            head = heads.get(b) or {"batch_id": b, "status": r["status"], "ended": 0, "runs": 0,
                                    "scenario_id": r["scenario_id"], "name": r["name"]}
            where[b] = {"series": head, "title": series_title(head["name"], head["scenario_id"], names), "trials": [r]}
            out.append(where[b])
        else:
            out.append({"run": r})
    return out


def _series_rows(user) -> tuple[list[dict], dict[str, str]]:
    names = scenario_names(user)
    rows = series.list_series(user.core, user.principal, limit=SERIES_PAGE)
    return [{**s, "title": series_title(s["name"], s["scenario_id"], names),
             "scenario_name": names.get(s["scenario_id"] or "", s["scenario_id"])} for s in rows], names


@router.get("/console")
async def dashboard(user: ConsoleUser):
    def read():
        runs = runs_service.list_runs(user.core, user.principal, limit=str(SCANNED))["runs"]
        ids = list(dict.fromkeys(r["batch_id"] for r in runs if r["batch_id"]))
        heads = {s["batch_id"]: s for s in series.list_series(user.core, user.principal, batch_ids=ids)}
        return _recent(runs, heads, scenario_names(user))
    recent = await asyncio.to_thread(read)
    use = usage_of(user.core, user.principal)
    return user.page("dashboard.html", recent=recent, allowances=use["allowances"], plan=user.principal.plan)


@router.get("/console/batches")
async def series_index(user: ConsoleUser):
    rows, _ = await asyncio.to_thread(_series_rows, user)
    return user.page("series_index.html", series_rows=rows)


@router.get("/console/usage")
async def usage_page(user: ConsoleUser):
    return user.page("usage.html", usage=usage_of(user.core, user.principal))
