"""Response shapes of a run (docs/RUNS.md, docs/ARENA.md, docs/SEATS.md): the run view and the answers
that carry it (launch, get, list, cancel), and the vocabulary the other *_schemas modules share.

As in api/schemas.py, routes return the service core's dicts and these models only describe them:
the JSON on the wire is the core's, field for field. Enumerations come from the core's own constants.
"""
from __future__ import annotations

from typing import Literal, Union

from pydantic import create_model

from api.result_schemas import AnyResults
from api.schemas import Closed, ErrorEnvelope, as_recorded
from engine.kernels.codes import STOP_REASONS
from engine.rules import RESOURCES
from orchestrator.grading.states import STATUSES as GRADING_STATUSES
from orchestrator.records import roster
from orchestrator.records.fork import PUBLIC as FORK_PUBLIC, RunFork
from orchestrator.records.run import Run as RunRecord
from orchestrator.statuses import STATUSES
from orchestrator.runs.series.stopping import SERIES_STOPPED

Status = Literal[STATUSES]
GradingStatus = Literal[GRADING_STATUSES]
StopReason = Literal[(*STOP_REASONS, SERIES_STOPPED)]
Provider = roster.Provider
Funding = roster.Funding
SeedSource = Literal["scenario", "run", "series", "drawn"]
SeedMode = Literal["vary", "pinned"]
Number = Union[int, float]


# --- the run view (docs/RUNS.md) ----------------------------------------------------------

class RunLive(Closed):
    tick: int
    season_ticks: int


class RunLinks(Closed):
    match: str
    log: str
    replay: str


class RunSpend(Closed):
    usd: float | None  # null: stored by an earlier version as a number JSON cannot carry (the run's note)
    cap_usd: float | None


class RunTurns(Closed):
    reserved: int
    settled: int | None


class ResourcePool(Closed):
    max: Number
    regen: Number


ResolvedResources = create_model("ResolvedResources", __base__=Closed,
                                 **{name: (ResourcePool, ...) for name in RESOURCES})


class ResolvedEnv(Closed):
    """Every env field as played, seeds included."""
    seed: int
    spawn_seed: int
    turn_timeout_ms: int
    actions_per_turn: int
    resources: ResolvedResources
    anchors: list[str]


ForkOf = create_model(
    "ForkOf", __base__=Closed, __doc__="""What a fork plays on from (docs/FORKS.md): the original run and match, the tick, the
    continuation seed (null: the original's own streams) and the arm of a series with control.""",
    **as_recorded(RunFork, *FORK_PUBLIC))


class Effective(Closed):
    """The world's as-played configuration; `hash` is over base, season_ticks and env."""
    season_ticks: int
    env: ResolvedEnv
    seed: int
    seed_source: SeedSource
    spawn_seed: int
    spawn_seed_source: SeedSource
    hash: str
    fork: ForkOf | None = None  # null for a run that is not a fork


class ArenaEnv(Closed):
    seed: int
    spawn_seed: int
    first_seat: int
    turn_timeout_ms: int


class ArenaEffective(Closed):
    """An arena game's as-played configuration: first_seat moved first (docs/ARENA.md)."""
    season_ticks: int
    env: ArenaEnv
    seed: int
    seed_source: SeedSource
    spawn_seed: int
    spawn_seed_source: SeedSource
    first_seat: int
    hash: str
    fork: None = None  # arena games do not fork


SkillPlayed = create_model("SkillPlayed", __base__=Closed, **as_recorded(roster.SkillPlayed, "id", "name", "text"))

SeatUsage = create_model(
    "SeatUsage", __base__=Closed,
    __doc__="""null where an earlier version stored a number JSON cannot carry (the run's note says so).""",
    **as_recorded(roster.SeatUsage, "agent_turns", "input_tokens", "output_tokens", "usd"))

SeatTurns = create_model(
    "SeatTurns", __base__=Closed, __doc__="""A model seat's turn counts (docs/SEATS.md).""",
    **as_recorded(roster.SeatTurns, "answered", "invalid", "timed_out", "provider_errors", "retries"))

# the record's fields, but its seats are always funded once stored, and its nested records are the wire's
RosterSeat = create_model(
    "RosterSeat", __base__=Closed,
    __doc__="""The seat as sent, resolved; usage and turns update while the run plays.""",
    **as_recorded(roster.Seat, "seat", "name", "model", "provider"),
    funding=(Funding, ...),
    **as_recorded(roster.Seat, "reasoning", "temperature", "max_tokens", "format"),
    skills=(list[SkillPlayed], ...),
    **as_recorded(roster.Seat, "instructions", "scaffold"),
    usage=(SeatUsage, ...),
    turns=(SeatTurns | None, ...),
    replied=(bool, None),  # model seats of an ended run: whether the model answered any turn
    note=(str, None),      # local seats sent skills or instructions: why they are ignored
)


class RunGrading(Closed):
    """Decision grading's progress (docs/RUBRIC.md): total counts the match's decisions once
    it is read (0 before); done with graded < total when some could not be graded."""
    status: GradingStatus
    graded: int
    total: int


# the view's own shape where it differs from the record (run_id for id, spend and turns nested, ...)
Run = create_model(
    "Run", __base__=Closed,
    run_id=(str, ...),
    **as_recorded(RunRecord, "match_id", "name", "status", "scenario_id", "scenario_hash", "batch_id",
                   "created_at_ms", "started_at_ms", "finished_at_ms"),
    live=(RunLive | None, ...),
    links=(RunLinks | None, ...),
    error=(ErrorEnvelope | None, ...),
    effective=(Union[Effective, ArenaEffective], ...),
    roster=(list[RosterSeat], ...),
    spend=(RunSpend, ...),
    agent_turns=(RunTurns, ...),
    stop_reason=(StopReason | None, ...),
    grading=(RunGrading | None, None),  # null: the run grades no decisions
    note=(str, None),  # values stored by an earlier version that read as null, and how to repair them
)


# --- answers -------------------------------------------------------------------------------------

class LaunchedBatch(Closed):
    batch_id: str
    trials: int
    seed_mode: SeedMode
    run_ids: list[str]


class Launched(Closed):
    ok: Literal[True]
    run: Run
    batch: LaunchedBatch | None


class RunOne(Closed):
    run: Run
    results: AnyResults | None


class RunList(Closed):
    runs: list[Run]
    next_cursor: str | None


class Cancelled(Closed):
    ok: Literal[True]
    cancelled: bool
    run: Run

