"""The answers the frames read, typed: each model is named after its component in the OpenAPI
document and declares only the fields the client reads (Studio.check finds each one there)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Interval(_Read):
    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str


class SeatSummary(_Read):
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


class BatchSummary(_Read):
    batch_id: str
    seats: list[SeatSummary]


class BatchView(_Read):
    batch_id: str
    status: str
    trials: int
    counts: dict[str, int]
    summary: BatchSummary


class Strength(_Read):
    label: str
    provider: str | None
    model: str | None
    estimate: float
    low: float
    high: float
    n: int
    rank: int
    group: int
    tied_with_leader: bool


class Board(_Read):
    scenario_id: str | None
    game: str
    by: str
    n_matches: int
    n_resamples: int
    method: str | None
    rows: list[Strength]


class Comparison(_Read):
    batch_a: str
    batch_b: str
    seat: int
    seat_b: int
    metric: str
    difference: Interval
    prob_improvement: Interval
    mean_a: float | None
    mean_b: float | None
    n: int


class AgentResult(_Read):
    """A seat's scorecard in a run's results (an arena game's seats carry the same fields)."""
    seat: int
    name: str
    model: str
    rank: int
    fitness_index: float
    grade: str
    archetype: str
    status: str


READ = (Interval, SeatSummary, BatchSummary, BatchView, Strength, Board, Comparison, AgentResult)
