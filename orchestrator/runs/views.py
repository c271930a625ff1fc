"""The run view of docs/RUNS.md, built from a stored row."""
from __future__ import annotations

import json
import sqlite3

from engine.arena.games import GAMES
from engine.arena.results import explain
from orchestrator import finite
from orchestrator.grading import plan as grading
from orchestrator.statuses import RUNNING


def links(match_id: str | None) -> dict | None:
    if not match_id:
        return None
    base = f"/api/matches/{match_id}"
    return {"match": f"{base}/report", "log": f"{base}/log", "replay": f"{base}/replay"}


def run_view(row: sqlite3.Row) -> dict:
    """The view of a stored run; a number an earlier version stored that JSON cannot carry (an infinite
    spend or usage) reads as null, with `note` saying which (orchestrator.finite)."""
    eff, bad = finite.loads(row["effective"])
    roster, bad_roster = finite.loads(row["roster"])
    spend = round(row["spend_usd"], 6) if finite.finite(row["spend_usd"]) else None
    eff.setdefault("fork", None)  # docs/FORKS.md: null for a run that is not a fork
    running = row["status"] == RUNNING
    view = {
        "run_id": row["id"],
        "match_id": row["match_id"],
        "name": row["name"],
        "status": row["status"],
        "scenario_id": row["scenario_id"],
        "scenario_hash": row["scenario_hash"],
        "batch_id": row["batch_id"],
        "created_at_ms": row["created_at_ms"],
        "started_at_ms": row["started_at_ms"],
        "finished_at_ms": row["finished_at_ms"],
        "live": {"tick": row["live_tick"] or 0, "season_ticks": eff["season_ticks"]} if running else None,
        "links": links(row["match_id"]),
        "error": json.loads(row["error"]) if row["error"] else None,
        "effective": eff,
        "roster": roster,
        "spend": {"usd": spend, "cap_usd": row["cap_usd"] if finite.finite(row["cap_usd"]) else None},
        "agent_turns": {"reserved": row["turns_reserved"], "settled": row["turns_settled"]},
        "stop_reason": row["stop_reason"],
        "grading": grading.view(row),
    }
    paths = ([f"effective.{p}" for p in bad] + [f"roster{p if p.startswith('[') else '.' + p}" for p in bad_roster]
             + (["spend.usd"] if spend is None else [])
             + (["spend.cap_usd"] if row["cap_usd"] is not None and not finite.finite(row["cap_usd"]) else []))
    if paths:
        view["note"] = finite.note(paths)
    return view


def results_of(row: sqlite3.Row) -> dict | None:
    if not row["results"]:
        return None
    results = json.loads(row["results"])
    # a world seat's decision grades, null until its grading is done; `fork` ({run_id, tick}) only on a
    # fork's results, so a run's results stay what the rubric recomputes from its log
    if "game" not in results:
        for entry in results["agents"]:
            entry.setdefault("decisions", None)
    elif results["game"]["id"] in GAMES:  # a game archived before its seats said what their grade grades
        for entry in results["agents"] + results["anchors"]:
            if "grade_note" not in entry:
                explain(entry, GAMES[results["game"]["id"]])
    return results
