"""Response shapes of the analysis over ended runs (orchestrator/runs/analysis.py): the leaderboard,
the comparison of two series, and the exports, as api/run_schemas.py describes runs."""
from __future__ import annotations

from typing import Literal

from api.schemas import Closed
from api.series_schemas import Interval


class Strength(Closed):
    label: str
    provider: str | None
    model: str | None
    estimate: float
    low: float
    high: float
    n: int
    method: str
    rank: int
    group: int
    tied_with_leader: bool


class Board(Closed):
    scenario_id: str | None  # null for a board of every scenario of one game
    game: str  # world, arena:chess or arena:connect-four: a board never spans two
    by: Literal["model", "name"]
    n_matches: int
    n_resamples: int
    confidence: float
    method: str | None
    rows: list[Strength]


class LeaderboardAnswer(Closed):
    leaderboard: Board


class Comparison(Closed):
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
    paired_on: list[list[int]]


class ComparisonAnswer(Closed):
    comparison: Comparison


class CsvExport(Closed):
    batch_id: str
    format: Literal["csv"]
    csv: str


class FileExport(Closed):
    """export_run's answer: the file GET /api/v1/runs/:id/export (or /batches/:id/export, or for format
    bundle /runs/:id/bundle) serves, as base64."""
    id: str
    format: Literal["csv", "parquet", "inspect", "bundle"]
    filename: str
    media_type: str
    size_bytes: int
    base64: str
