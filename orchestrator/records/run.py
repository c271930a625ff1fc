"""A run as the service reasons about it: its row's columns with the JSON ones read (its effective
configuration, its roster of seats, its error, results, archive manifest and fork record)."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from orchestrator.records.base import Count, Ms, Record, Text, Usd
from orchestrator.records.fork import RunFork
from orchestrator.statuses import IN_WORLD, STATUSES


def _status(value: str) -> str:
    if value not in STATUSES:
        raise ValueError(f"a run's status is one of {', '.join(STATUSES)}, not {value!r}")
    return value


Status = Annotated[str, AfterValidator(_status)]
Id = Annotated[str, Field(min_length=1, max_length=64)]


class Run(Record):
    """unreadable: where the stored row held a number JSON cannot carry (an earlier version's infinite
    spend or usage), read here as null: `effective.<path>`, `roster[<i>].<path>`, `spend_usd`, `cap_usd`."""
    seq: Count
    id: Id
    account_id: Id
    launch_id: Id
    batch_id: Id | None = None
    trial: Count = 0
    name: Text
    status: Status
    scenario_id: Id
    scenario_hash: str
    match_id: Id | None = None
    scripted: bool
    effective: dict[str, Any]
    roster: list[dict[str, Any]]
    cap_usd: Usd | None = None
    spend_usd: Usd | None = 0.0
    turns_reserved: Count
    turns_settled: Count | None = None
    live_tick: Count | None = None
    stop_reason: str | None = None
    error: dict[str, Any] | None = None
    results: dict[str, Any] | None = None
    cancel_requested: bool = False
    created_at_ms: Ms
    started_at_ms: Ms | None = None
    finished_at_ms: Ms | None = None
    resumes: Count = 0
    grading: str | None = None
    grading_status: str | None = None
    graded: Count = 0
    grading_total: Count = 0
    grading_starts: Count = 0
    archived: dict[str, Any] | None = None
    fork: RunFork | None = None
    unreadable: tuple[str, ...] = ()

    @property
    def in_world(self) -> bool:
        return self.status in IN_WORLD

    @property
    def season_ticks(self) -> int:
        return self.effective["season_ticks"]

    def work(self) -> int:
        """Agents (seats and anchors) x season ticks: what a chunk of runs is bounded by."""
        return self.season_ticks * (len(self.roster) + len(self.effective["env"].get("anchors") or ()))


class RunRef(Record):
    """A run as the archiver needs it: which match it played, in which series."""
    id: Id
    batch_id: Id | None = None
    match_id: Id | None = None
    status: Status | None = None
