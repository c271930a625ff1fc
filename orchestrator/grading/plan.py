"""What a run grades: the run body's `grading` mode, the seats it picks, the grading's state at
launch, the run view's `grading` object, and how a match's decisions are split into tasks."""
from __future__ import annotations

import math

from orchestrator.provider_kinds import LOCAL

MODES = ("auto", "all", "off")
DEFAULT_MODE = "auto"
# A task grades at least this many decisions: below it, rebuilding the match's state and loading the
# grader in a worker cost more than the rollouts they would share out.
MIN_PART = 16


def graded_seats(roster: list[dict], mode: str | None) -> list[int]:
    """Roster seats whose decisions are graded: under auto every seat not played by a local policy
    (model and agent seats), under all every seat, under off none. Anchors are not in the roster and
    are never graded."""
    mode = mode or DEFAULT_MODE
    if mode == "off":
        return []
    return [s["seat"] for s in roster if mode == "all" or s.get("provider") != LOCAL]


def launch_state(kind, roster: list[dict], mode: str | None) -> tuple[str | None, str | None]:
    """(mode, status) a new run is stored with. A kind that grades no decisions (arena games keep
    their own oracle) and a run with no seat to grade have no grading (status None); off says so."""
    mode = mode or DEFAULT_MODE
    if not kind.grades_decisions:
        return mode, None
    if mode == "off":
        return mode, "off"
    return mode, ("pending" if graded_seats(roster, mode) else None)


def view(run) -> dict | None:
    """The run view's `grading`: {status, graded, total}, null for a run with nothing to grade.
    total counts the match's decisions once it is read (0 before)."""
    status = run.grading_status
    if status is None:
        return None
    return {"status": status, "graded": run.graded, "total": run.grading_total}


def parts(decisions: list, tasks: int, most: int) -> list[list]:
    """Decisions (in tick order) in contiguous parts of at least MIN_PART and at most `most` each, in
    `tasks` parts where there are enough to go round: a part rebuilds the match only up to its own last
    tick, and a bounded part frees its slot soon for the next account in turn."""
    if not decisions:
        return []
    n = max(1, min(tasks, len(decisions) // MIN_PART), math.ceil(len(decisions) / max(MIN_PART, most)))
    size = math.ceil(len(decisions) / n)
    return [decisions[k:k + size] for k in range(0, len(decisions), size)]
