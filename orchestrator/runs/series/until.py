"""`until` and `budget_usd` on a series body (docs/RUNS.md): their shape, their rules at
admission, and what the estimate says about them. The dispatcher's side (when a series stops, what a
trial may spend) is stopping.py; how many trials it launches at once, waves.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal, Union

from pydantic import Field, StrictFloat, StrictInt, WithJsonSchema

from analytics.data import DIMENSIONS
from orchestrator.errors import DomainError
from orchestrator.runs.series import waves
from orchestrator.validation import StrictModel
from orchestrator.finite import INT_RANGE

METRICS = ("fitness_index", *DIMENSIONS)
DEFAULT_METRIC = "fitness_index"
# every metric a target may name lies on the rubric's 0..100 scale (docs/RUBRIC.md, docs/api.md)
SCALES = {m: (0.0, 100.0) for m in METRICS}
REFERENCE_SD = 10.0  # fitness points: the spread precision figures are quoted at (docs/RUNS.md)
HalfWidth = Annotated[Union[StrictInt, StrictFloat], Field(gt=0, allow_inf_nan=False),
                      WithJsonSchema({"type": "number", "exclusiveMinimum": 0})]


class Until(StrictModel):
    """Stop launching trials once the confidence sequence of the metric's mean is this narrow."""
    half_width: HalfWidth
    metric: Literal[METRICS] | None = None
    seat: Annotated[StrictInt, Field(ge=0, le=INT_RANGE)] | None = None


CODES = {"until": "bad_until", "budget_usd": "bad_spend_cap"}
HINTS = {"until": "send {half_width, metric?, seat?} on a series (trials above 1)",
         "half_width": "send a number above 0 in the metric's own units (points on the 0..100 scale)",
         "metric": "send fitness_index or one of " + ", ".join(DIMENSIONS),
         "seat": "send a roster seat index (from 0), or null for every roster seat",
         "budget_usd": "send a number of US dollars for the whole series; it is clamped into the plan's range"}


@dataclass(frozen=True)
class Stopping:
    """What a series launch carries for the dispatcher: the target (normalised) and the budget.
    paired: a fork with a control arm, whose target applies to the paired effect."""
    until: dict | None
    budget_usd: float | None
    min_cap_usd: float
    paired: bool = False

    @property
    def any(self) -> bool:
        return self.until is not None or self.budget_usd is not None


def check(body: dict, trials: int, cap_range: tuple[float, float], paired: bool = False) -> Stopping:
    """The body's until and budget_usd under docs/RUNS.md's rules (the shapes are checked with the body).
    paired: the body forks a run with a control arm."""
    raw, budget = body.get("until"), body.get("budget_usd")
    if raw is not None and trials < 2:
        raise DomainError("bad_until", "until: only a series stops when precise enough; send trials above 1 "
                          "(the most trials it may play)")
    if budget is not None and trials < 2:
        raise DomainError("bad_request", "budget_usd: only a series takes a budget; a single run's stop is "
                          "max_spend_usd")
    until = None
    if raw is not None:
        seat, seats = raw.get("seat"), len(body["roster"])
        if seat is not None and seat >= seats:
            raise DomainError("bad_until", f"until.seat: {seat} is not a seat of the roster; send an index from 0 "
                              f"to {seats - 1}, or null for every roster seat")
        until = {"half_width": raw["half_width"], "metric": raw.get("metric") or DEFAULT_METRIC, "seat": seat}
        # the first wave's figure, computed here (outside any transaction) so that the dispatcher's claim,
        # in the same process, finds it kept rather than spending seconds on it while every run waits
        waves.first_wave(until["half_width"], trials, REFERENCE_SD, *SCALES[until["metric"]], paired=paired)
    lo, hi = cap_range
    return Stopping(until, None if budget is None else min(hi, max(lo, float(budget))), lo, paired)


def estimate(batch: dict, stopping: Stopping, trials: int) -> None:
    """The estimate's additions: precision.expected_trials with a target (what the wave rule plays at
    the reference spread), and the USD range it implies (that many trials' low end to the ceiling's
    high end, neither above the budget)."""
    usd = batch["usd"]
    low, high = usd["low"], usd["high"]
    if stopping.until is not None:
        u = stopping.until
        expected = waves.expected_trials(u["half_width"], trials, batch["precision"]["reference_sd"],
                                         *SCALES[u["metric"]], paired=stopping.paired)
        batch["precision"]["expected_trials"] = expected
        low = low / trials * expected
    if stopping.budget_usd is not None:
        high = min(high, stopping.budget_usd)
    batch["usd"] = {"low": _down(min(low, high)), "high": high}


def _down(usd: float) -> float:
    return math.floor(usd * 1e4) / 1e4  # the estimate's 4 decimals, never above the exact figure
