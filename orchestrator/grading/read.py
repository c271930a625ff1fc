"""A run's graded decisions as the store holds them: the console's marks, the public report's regret
and the series summary's `decisions` table read through here; the owner's paged read (GET
/api/v1/runs/:id/decisions, MCP get_decisions) is orchestrator.runs.pages.decisions."""
from __future__ import annotations

import json

import pyarrow as pa

from analytics.grading import GRADER, HORIZON, ROLLOUTS, published
from orchestrator.core import Core


def labels(core: Core, run_id: str, keys: list[tuple[int, int]]) -> dict[tuple[int, int], dict]:
    """(tick, seat) -> its graded row, for the given turns of a run the caller already owns (the
    console marks each graded turn of a transcript page)."""
    if not keys:
        return {}
    lo, hi = min(t for t, _ in keys), max(t for t, _ in keys)
    rows = core.store.all("SELECT tick, seat, turn FROM decision_turns WHERE run_id = ? AND tick BETWEEN ? AND ?",
                          (run_id, lo, hi))
    wanted = set(keys)
    return {(r["tick"], r["seat"]): published(json.loads(r["turn"])) for r in rows if (r["tick"], r["seat"]) in wanted}


def marked(core: Core, run_id: str, seats: list[int] | None = None, limit: int = 200) -> list[dict]:
    """A run's labelled decisions (inaccuracies, mistakes, blunders), worst first, for its owner's page."""
    rows = [published(json.loads(r["turn"])) for r in core.store.all(
        "SELECT turn FROM decision_turns WHERE run_id = ? AND json_extract(turn, '$.label') IS NOT NULL", (run_id,))]
    if seats is not None:
        rows = [r for r in rows if r["seat"] in seats]
    return sorted(rows, key=lambda r: (-r["regret"], r["tick"], r["seat"]))[:limit]


def public(core: Core, row) -> dict | None:
    """What the public match report shows of a done grading: per graded seat its summary and its
    regret tick by tick (numbers only: no actions, no reply), or None."""
    if row.grading_status != "done":
        return None
    names = {s["seat"]: s["name"] for s in row.roster}
    seats = []
    for r in core.store.all("SELECT seat, summary FROM decision_seats WHERE run_id = ? ORDER BY seat", (row.id,)):
        regret = [[t["tick"], t["regret"]] for t in (json.loads(x["turn"]) for x in core.store.all(
            "SELECT turn FROM decision_turns WHERE run_id = ? AND seat = ? ORDER BY tick", (row.id, r["seat"])))]
        seats.append({"seat": r["seat"], "name": names.get(r["seat"], ""), **json.loads(r["summary"]),
                      "regret": regret})
    return {"grader": GRADER, "horizon_ticks": HORIZON, "rollouts": ROLLOUTS, "seats": seats}


def graded_seats(core: Core, match_ids: list[str]) -> pa.Table:
    """(match_id, seat, accuracy) of every graded seat of these matches: the series summary's
    `decisions` table."""
    rows = []
    for k in range(0, len(match_ids), 500):  # SQLite's bound-parameter ceiling
        part = match_ids[k:k + 500]
        rows += core.store.all(
            "SELECT r.match_id, d.seat, json_extract(d.summary, '$.accuracy') AS accuracy FROM decision_seats d "
            f"JOIN runs r ON r.id = d.run_id WHERE r.match_id IN ({','.join('?' * len(part))})", tuple(part))
    return pa.table({"match_id": pa.array([r["match_id"] for r in rows], pa.string()),
                     "seat": pa.array([r["seat"] for r in rows], pa.int32()),
                     "accuracy": pa.array([r["accuracy"] for r in rows], pa.float64())})
