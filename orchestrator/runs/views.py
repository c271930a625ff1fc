"""The run view of docs/RUNS.md, built from the Run record."""
from __future__ import annotations

from engine.arena.games import GAMES
from engine.arena.results import explain
from orchestrator import finite
from orchestrator.grading import plan as grading
from orchestrator.records.roster import plain
from orchestrator.records.run import Run
from orchestrator.statuses import RUNNING

# where a value the record read as null shows in the view
_SHOWN = {"spend_usd": "spend.usd", "cap_usd": "spend.cap_usd"}


def links(match_id: str | None) -> dict | None:
    if not match_id:
        return None
    base = f"/api/matches/{match_id}"
    return {"match": f"{base}/report", "log": f"{base}/log", "replay": f"{base}/replay"}


def run_view(run: Run) -> dict:
    """The view of a stored run; a number an earlier version stored that JSON cannot carry (an infinite
    spend or usage) reads as null, with `note` saying which (finite.note)."""
    eff = dict(run.effective)
    eff.setdefault("fork", None)  # docs/FORKS.md: null for a run that is not a fork
    view = {
        "run_id": run.id,
        "match_id": run.match_id,
        "name": run.name,
        "status": run.status,
        "scenario_id": run.scenario_id,
        "scenario_hash": run.scenario_hash,
        "batch_id": run.batch_id,
        "created_at_ms": run.created_at_ms,
        "started_at_ms": run.started_at_ms,
        "finished_at_ms": run.finished_at_ms,
        "live": {"tick": run.live_tick or 0, "season_ticks": eff["season_ticks"]} if run.status == RUNNING else None,
        "links": links(run.match_id),
        "error": run.error,
        "effective": eff,
        "roster": plain(run.roster),
        "spend": {"usd": None if run.spend_usd is None else round(run.spend_usd, 6), "cap_usd": run.cap_usd},
        "agent_turns": {"reserved": run.turns_reserved, "settled": run.turns_settled},
        "stop_reason": run.stop_reason,
        "grading": grading.view(run),
    }
    if run.unreadable:
        view["note"] = finite.note([_SHOWN.get(p, p) for p in run.unreadable])
    return view


def results_of(run: Run) -> dict | None:
    if not run.results:
        return None
    results = run.results
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
