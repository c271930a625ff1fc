"""A run's decision grading as the store keeps it: its status, a graded decision, a seat's summary."""
from __future__ import annotations

from typing import Any, Literal

from orchestrator.records.base import Count, Record
from orchestrator.records.roster import Seat

STATUSES = ("pending", "running", "done", "off")
Status = Literal["pending", "running", "done", "off"]
OPEN = ("pending", "running")  # the runs_grading index covers exactly these

# A graded decision as GET /runs/:id/decisions publishes it (a stored one also carries blind_regret).
PUBLISHED = ("tick", "seat", "chosen", "value", "best", "best_value", "regret", "accuracy", "label")


class Decision(Record):
    """One graded decision: what the seat chose and its value by rollouts, the best candidate and its
    value, the regret between them, its accuracy and label (null below an inaccuracy)."""
    tick: Count
    seat: Count
    chosen: Any = None
    value: float | None = None
    best: Any = None
    best_value: float | None = None
    regret: float
    accuracy: float | None = None
    label: str | None = None
    blind_regret: float | None = None

    def published(self) -> dict:
        return {k: getattr(self, k) for k in PUBLISHED}


class GradingPlan(Record):
    """What a grading needs of its run: the roster and the run body's mode (which seats it grades),
    the world's env and the tick a fork plays from (0 for a run that is no fork)."""
    roster: tuple[Seat, ...]
    mode: str | None
    env: dict[str, Any]
    fork_tick: Count = 0


class OpenGrading(Record):
    """An ended run whose grading is open: whether it has a scored match to grade, how often its
    grading was started, and for a pending one with a match its plan."""
    run_id: str
    account_id: str
    status: Literal["pending", "running"]
    match_id: str | None
    batch_id: str | None
    scored: bool
    starts: Count
    plan: GradingPlan | None = None


class SeatGrading(Record):
    """A graded seat as the public match report shows it: its summary and its regret tick by tick."""
    seat: Count
    name: str
    summary: dict[str, Any]
    regret: list[tuple[int, float | None]]
