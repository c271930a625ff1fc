"""A run as the service reasons about it: its row's columns with the JSON ones read (its effective
configuration, its roster of seats, its error, results, archive manifest and fork record)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from orchestrator.records.base import INT64, Count, Ms, Record, Text
from orchestrator.records.fork import RunFork
from orchestrator.records.roster import Seat
from orchestrator.statuses import IN_WORLD, STATUSES

Status = Literal[STATUSES]
Id = Annotated[str, Field(min_length=1, max_length=64)]
# Optional fields carry their bounds on the field, not inside the union: the API's models take the
# field's type from here (api/run_schemas.py), and a bound is the store's, not the wire's.
_ID = {"min_length": 1, "max_length": 64}
_MS = {"ge": 0, "le": INT64}


class Run(Record):
    """unreadable: where the stored row held a number JSON cannot carry (an earlier version's infinite
    spend or usage), read here as null: `effective.<path>`, `roster[<i>].<path>`, `spend_usd`, `cap_usd`."""
    seq: Count
    id: Id
    account_id: Id
    launch_id: Id
    batch_id: str | None = Field(default=None, **_ID)
    trial: Count = 0
    name: Text
    status: Status
    scenario_id: Id
    scenario_hash: str
    match_id: str | None = Field(default=None, **_ID)
    scripted: bool
    effective: dict[str, Any]
    roster: tuple[Seat, ...]
    cap_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    spend_usd: float | None = Field(default=0.0, ge=0, allow_inf_nan=False)
    turns_reserved: Count
    turns_settled: Count | None = None
    live_tick: Count | None = None
    stop_reason: str | None = None
    error: dict[str, Any] | None = None
    results: dict[str, Any] | None = None
    cancel_requested: bool = False
    created_at_ms: Ms
    started_at_ms: int | None = Field(default=None, **_MS)
    finished_at_ms: int | None = Field(default=None, **_MS)
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


@dataclass(slots=True)
class Ended:
    """A played run as its worker hands it to the head, which stores it through the runs repository
    (`ended`): the run's columns, the two large ones already in their stored text (encoded by the
    repository's own functions, on the worker: a structure costs the head more to unpickle and encode
    than the text it becomes), and the match's files as bytes only when the worker could not land them
    (the head lands those and clears them). A plain class, not a Record: the head takes thousands a
    minute, and a check on its side would cost the head what the worker saves it."""
    run_id: str
    status: str
    stop_reason: str
    match_ticks: int
    match_id: str | None
    results: str | None   # the rubric's scorecards, as the runs repository encodes them (results_text)
    roster: str           # the roster with each seat's usage, likewise (roster_text)
    spend_usd: float
    turns_settled: int
    error: dict | None = None
    started_at_ms: int | None = None
    archived: dict | None = None     # the files written, their sizes, which node and process
    events: bytes | None = None
    seats: bytes | None = None
    transcript: bytes | None = None
    game: bytes | None = None


class RunRef(Record):
    """A run as the archiver needs it: which match it played, in which series."""
    id: Id
    batch_id: str | None = Field(default=None, **_ID)
    match_id: str | None = Field(default=None, **_ID)
    status: Status | None = None
