"""A run's graded decisions as the store holds them: the console's marks, the public report's regret
and the series summary's `decisions` table read through here; the owner's paged read (GET
/api/v1/runs/:id/decisions, MCP get_decisions) is the run pages' own."""
from __future__ import annotations

import pyarrow as pa

from analytics.grading import GRADER, HORIZON, ROLLOUTS
from orchestrator.core import Core
from orchestrator.store import grading as stored


def labels(core: Core, run_id: str, keys: list[tuple[int, int]]) -> dict[tuple[int, int], dict]:
    """(tick, seat) -> its graded row, for the given turns of a run the caller already owns (the
    console marks each graded turn of a transcript page)."""
    if not keys:
        return {}
    wanted = set(keys)
    return {(d.tick, d.seat): d.published() for d in stored.between(
        core.store.conn(), run_id, min(t for t, _ in keys), max(t for t, _ in keys)) if (d.tick, d.seat) in wanted}


def marked(core: Core, run_id: str, seats: list[int] | None = None, limit: int = 200) -> list[dict]:
    """A run's labelled decisions (inaccuracies, mistakes, blunders), worst first, for its owner's page."""
    rows = [d.published() for d in stored.labelled(core.store.conn(), run_id) if seats is None or d.seat in seats]
    return sorted(rows, key=lambda r: (-r["regret"], r["tick"], r["seat"]))[:limit]


def public(core: Core, row) -> dict | None:
    """What the public match report shows of a done grading: per graded seat its summary and its
    regret tick by tick (numbers only: no actions, no reply), or None."""
    if row.grading_status != "done":
        return None
    seats = [{"seat": s.seat, "name": s.name, **s.summary, "regret": [list(t) for t in s.regret]}
             for s in stored.seats(core.store.conn(), row.id)]
    return {"grader": GRADER, "horizon_ticks": HORIZON, "rollouts": ROLLOUTS, "seats": seats}


def graded_seats(core: Core, match_ids: list[str]) -> pa.Table:
    """(match_id, seat, accuracy) of every graded seat of these matches: the series summary's
    `decisions` table."""
    rows = stored.accuracies(core.store.conn(), match_ids)
    return pa.table({"match_id": pa.array([r[0] for r in rows], pa.string()),
                     "seat": pa.array([r[1] for r in rows], pa.int32()),
                     "accuracy": pa.array([r[2] for r in rows], pa.float64())})
