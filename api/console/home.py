"""The dashboard (the latest runs and the plan's allowances) and the usage page."""
from __future__ import annotations

from fastapi import APIRouter

from api.console.pages import ConsoleUser
from orchestrator.runs import service as runs_service
from orchestrator.runs.usage import usage as usage_of

router = APIRouter(include_in_schema=False)


@router.get("/console")
async def dashboard(user: ConsoleUser):
    runs = runs_service.list_runs(user.core, user.principal, limit="10")["runs"]
    use = usage_of(user.core, user.principal)
    return user.page("dashboard.html", runs=runs, allowances=use["allowances"], plan=user.principal.plan)


@router.get("/console/usage")
async def usage_page(user: ConsoleUser):
    return user.page("usage.html", usage=usage_of(user.core, user.principal))
