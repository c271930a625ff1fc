"""A series as the stopping rule, the batch read and the pages reason about it: its target (`until`,
parsed once when the row is read), its budget, the confidence sequences kept at the last end (`cs`),
why it stopped, and the fork it launched. Plus the light rows the rules read over a series' trials."""
from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

from pydantic import Field

from orchestrator.records.base import INT64, Count, Ms, Record, Usd

Key = Annotated[str, Field(max_length=64)]
# Why the service stopped launching a series' trials: what the store keeps (precise, budget) and what a
# view derives once nothing is left to play (ceiling, cancelled).
Stop = Literal["precise", "ceiling", "budget", "cancelled"]
Bound = Annotated[float, Field(allow_inf_nan=False)]


class Until(Record):
    """The target: stop once the sequence of the metric's mean is this narrow, on each side."""
    half_width: Annotated[int | float, Field(gt=0, allow_inf_nan=False)]  # as sent: 2 stays 2 in a view
    metric: Key
    seat: Annotated[int, Field(ge=0, le=INT64)] | None = None


class Sequence(Record):
    """One confidence sequence as kept: its bounds, half-width and method (bounds None before any score)."""
    low: Bound | None = None
    high: Bound | None = None
    half_width: Bound | None = None
    method: Key | None = None


class SeriesFork(Record):
    """The fork a series launched: the original run, the tick, whether a control arm plays beside it,
    and the seats it changed."""
    run_id: Key
    tick: Count
    control: bool = False
    seats: tuple[Count, ...] = ()


class Series(Record):
    id: Key
    account_id: Key
    trials: Count
    seed_mode: Key
    batch_seed: Annotated[int, Field(ge=-INT64, le=INT64)]
    created_at_ms: Ms
    until: Until | None = None
    budget_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    min_cap_usd: Usd | None = None
    trial_spends: bool = True
    stopped: Stop | None = None
    cs: dict[Key, Sequence] = {}
    fork: SeriesFork | None = None

    @property
    def paired(self) -> bool:
        """A fork with a control arm: its trials are pairs of twins."""
        return self.fork is not None and self.fork.control

    @property
    def controlled(self) -> bool:
        """A target or a budget decides when it stops launching trials."""
        return self.until is not None or self.budget_usd is not None


class Spending(NamedTuple):
    """A series' money as its budget sees it: every trial's metered spend, what the playing trials
    may still spend under their caps, and how many trials play and wait."""
    spent: float
    held: float
    playing: int
    queued: int


class TrialRun(NamedTuple):
    """One run of a series as the wave rule reads it, in launch order; arm: fork or control, else None."""
    id: str
    status: str
    has_results: bool
    arm: str | None


class SeriesRuns(NamedTuple):
    """What a read of a series sees of its runs (trial order): ids, statuses, match ids, grading
    states; the version of its kept summary; what its runs metered and how many the caller cancelled."""
    ids: tuple[str, ...]
    statuses: tuple[str, ...]
    match_ids: tuple[str | None, ...]
    grading: tuple[str | None, ...]
    kept: str | None
    spent_usd: float
    cancelled: int


class KeptSummary(NamedTuple):
    """A series' summary as kept: the version (digest of the matches it covers), the summary and its
    JSON text as sent."""
    version: str
    summary: dict
    text: str
