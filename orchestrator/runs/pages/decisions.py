"""A run's graded decisions, for its owner: GET /api/v1/runs/:id/decisions and MCP get_decisions.
Pages as the transcript does: the same seat, cursor and limit
rules and errors, in tick then seat order."""
from __future__ import annotations

from analytics.grading import GRADER, HORIZON, ROLLOUTS
from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.grading import plan
from orchestrator.runs.pages.transcript import paged
from orchestrator.store import grading as stored


def get_decisions(core: Core, principal: Principal, run_id: str, *, seat=None, cursor=None, limit=None) -> dict:
    """{grader, horizon_ticks, rollouts, status, turns: [{tick, seat, chosen, value, best, best_value,
    regret, accuracy, label}], next_cursor}; status is the run view's grading status (null when the
    run grades nothing), turns those graded so far."""
    row, seat, offset, limit = paged(core, principal, run_id, seat, cursor, limit)
    got = stored.page(core.store.conn(), run_id, seat=seat, limit=limit + 1, offset=offset)
    turns = [d.published() for d in got[:limit]]
    grading = plan.view(row)
    return {"grader": GRADER, "horizon_ticks": HORIZON, "rollouts": ROLLOUTS,
            "status": grading["status"] if grading else None, "turns": turns,
            "next_cursor": str(offset + len(turns)) if len(got) > limit else None}
