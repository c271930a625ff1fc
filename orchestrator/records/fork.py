"""A fork's records: what each run of a fork launch plays from (the run's), and what the series of a
forked launch says it forked (the series')."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from orchestrator.records.base import INT64, Count, Record

ARMS = ("fork", "control")
# what a run's view shows of its fork record (its effective configuration's `fork`)
PUBLIC = ("run_id", "match_id", "tick", "continuation_seed", "arm")


class RunFork(Record):
    """Built and checked at admission, stored with the run, read by the dispatcher into its job and
    by the worker that plays it. `archive` is where the worker reads the original: the dispatcher's
    to add, never stored (a run may be played by a service whose archive moved)."""
    run_id: str = Field(min_length=1, max_length=64)
    match_id: str = Field(min_length=1, max_length=64)
    tick: int = Field(ge=1, le=1_000_000)
    continuation_seed: int | None = Field(default=None, ge=0, le=INT64)
    arm: Literal["fork", "control"]
    key: str | None = Field(default=None, max_length=64)  # the original's series: its archive key
    changed: tuple[Count, ...] = ()  # seats handed to another player (the fork arm's)
    played: tuple[str | None, ...] = ()  # per roster seat, the scripted policy that played all of the original
    mixed: tuple[Count, ...] = ()  # seats several players had, this run included
    archive: str = ""

    def public(self) -> dict:
        """What the run's effective configuration shows of its fork (its view's `effective.fork`)."""
        return {name: getattr(self, name) for name in PUBLIC}

    def stored(self) -> dict:
        return self.model_dump(exclude={"archive"})


class SeriesFork(Record):
    """What a forked series launched: the original run, the tick, the control arm, the seats changed."""
    run_id: str = Field(min_length=1, max_length=64)
    tick: int = Field(ge=1, le=1_000_000)
    control: bool
    seats: tuple[Count, ...] = ()
