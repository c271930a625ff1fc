"""A model seat's transcript in the console: the owner's readable view of /api/v1/runs/:id/transcript,
one page of turns at a time, through the same service function."""
from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter

from api.console.pages import ConsoleUser, dead_end
from orchestrator.errors import DomainError
from orchestrator.grading import read as decisions
from orchestrator.runs import kinds, service as runs_service
from orchestrator.statuses import SCORED
from orchestrator.runs.pages.transcript import get_transcript, observations

router = APIRouter(include_in_schema=False)


def _actions(actions) -> list:
    """What the engine received (world actions as objects, arena moves as text); the archive keeps them
    as a JSON list's text."""
    if isinstance(actions, str):
        try:
            actions = json.loads(actions)
        except ValueError:
            return [actions]
    return list(actions or [])


@router.get("/console/runs/{run_id}/transcript")
async def transcript_page(user: ConsoleUser, run_id: str, seat: str | None = None, cursor: str | None = None):
    def read():  # in a thread, as REST's transcript: the turns and the match's log are archive files
        got = get_transcript(user.core, user.principal, run_id, seat=seat, cursor=cursor, limit="100")
        # what each turn's seat was shown, rebuilt from the ended match's log (not kept in the transcript)
        return got, observations(user.core, user.principal, run_id, got["turns"])
    try:
        run = runs_service.get_run(user.core, user.principal, run_id)["run"]
        got, shown = await asyncio.to_thread(read)
    except DomainError as e:
        return dead_end(user, e)
    grades = decisions.labels(user.core, run_id, [(t["tick"], t["seat"]) for t in got["turns"]])
    turns = [dict(t, actions=_actions(t.get("actions")), grade=grades.get((t["tick"], t["seat"])),
                  observation=shown.get((t["tick"], t["seat"]))) for t in got["turns"]]
    forkable = run["status"] in SCORED and run["match_id"] is not None and kinds.of(run["scenario_id"]) is kinds.WORLD
    return user.page("transcript.html", run=run, seat=None if seat is None else int(seat),
                     turns=turns, next_cursor=got["next_cursor"], forkable=forkable)
