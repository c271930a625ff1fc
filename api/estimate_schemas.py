"""Response shape of a launch's estimate (docs/RUNS.md), as api/run_schemas.py describes runs."""
from __future__ import annotations

from typing import Literal

from pydantic import create_model

from api.run_schemas import Funding
from api.schemas import Closed, as_recorded
from orchestrator.records import roster


class Range(Closed):
    low: float
    high: float


class MsRange(Closed):
    low: int
    high: int


EstimateSeat = create_model(
    "EstimateSeat", __base__=Closed,
    **as_recorded(roster.Seat, "seat", "name", "model", "provider"),
    funding=(Funding, ...),  # the seat's once admitted (the record's is null until then)
    priced=(Literal["table", "fallback", "free", "key"], ...),
)


class EstimateQuota(Closed):
    agent_turns_remaining: int | None
    after_launch: int | None


class EstimateQueue(Closed):
    queued: int
    limit: int
    headroom: int


class Precision(Closed):
    """The expected 95% half-width of the series' mean fitness_index at the reference spread (null for one
    run, which has no interval), against how far one run may land; method: the interval the summary uses."""
    reference_sd: float
    half_width_95: float | None
    single_run_half_width_95: float
    method: str
    # with `until` (docs/RUNS.md): the trials a series stopped by it plays at the reference spread
    expected_trials: int | None = None


class EstimateGrading(Closed):
    """What grading the launch's decisions costs (docs/RUBRIC.md): decisions it may grade at most
    (graded seats x ticks x trials), their CPU seconds at benchmarks/grading.py's rate, and the wall
    clock from its parts graded on the most slots one account may hold (low) to one slot (high)."""
    decisions: int
    cpu_s: float
    wall_clock_ms: MsRange


class EstimateBatch(Closed):
    trials: int
    agent_turns: int
    usd: Range
    wall_clock_ms: MsRange
    seats: list[EstimateSeat]
    prices_as_of: str
    warnings: list[str]
    spend_cap_usd: float | None
    quota: EstimateQuota
    queue: EstimateQueue
    precision: Precision
    grading: EstimateGrading | None = None  # null: the launch grades no decisions


class Estimate(Closed):
    ok: Literal[True]
    batch: EstimateBatch

