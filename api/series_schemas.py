"""Response shapes of a series (GET /api/v1/batches/:id): its view and its summary by seat, as
api/run_schemas.py describes runs."""
from __future__ import annotations

from typing import Literal

from pydantic import create_model

from api.run_schemas import SeedMode, Status
from api.schemas import Closed, as_recorded
from orchestrator.records.series import Series
from orchestrator.runs.series.until import Until


class Interval(Closed):
    """An estimate with its interval: null bounds where too few observations give none."""
    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    confidence: float


class ConfidenceSequence(Closed):
    """The anytime-valid 95% confidence sequence of the mean, after the trials
    scored so far in the order they ended (docs/RUNS.md)."""
    low: float
    high: float
    half_width: float
    method: str


class SeatSummary(Closed):
    seat: int
    name: str
    model: str
    anchor: bool
    n: int
    matches: int
    fitness_index: Interval
    dimensions: dict[str, Interval]
    win_rate: Interval
    survival_rate: Interval
    mean_rank: float | None
    crafter_score: float | None
    achievement_rates: dict[str, float]
    decision_accuracy: Interval | None = None  # graded seats: mean decision accuracy over graded matches
    cs: ConfidenceSequence | None = None  # a series with `until`: the sequence for its metric


class BatchSummary(Closed):
    """The series' summary, one entry per seat."""
    batch_id: str
    run_ids: list[str]
    by: Literal["seat"]
    runs: int
    matches: int
    scenario_ids: list[str]
    seeds: int
    confidence: float
    seats: list[SeatSummary]


class Effect(Closed):
    """A forked series with control: a changed seat's mean paired difference fork - control on one
    metric, with its 95% interval over n complete pairs (docs/FORKS.md)."""
    seat: int
    metric: str
    mean: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    cs: ConfidenceSequence | None = None  # a series with `until`, on its metric: the sequence of the difference


# the view's own shape where it differs from the record (batch_id for id, the until as sent, ...)
BatchView = create_model(
    "BatchView", __base__=Closed,
    batch_id=(str, ...),
    status=(Status, ...),
    **as_recorded(Series, "trials"),
    seed_mode=(SeedMode, ...),
    **as_recorded(Series, "batch_seed"),
    run_ids=(list[str], ...),
    counts=(dict[Status, int], ...),
    until=(Until | None, ...),
    **as_recorded(Series, "budget_usd", "stopped"),
    spent_usd=(float, ...),
    summary=(BatchSummary, ...),
    effect=(list[Effect] | None, None),  # a forked series with control only
)


class BatchOne(Closed):
    batch: BatchView

