"""Response shapes of the run routes and tools (CONTRACT.md sections 2 to 4, 11 and 12).

As in api/schemas.py, routes return the service core's dicts and these models only describe them:
the JSON on the wire is the core's, field for field. Enumerations come from the core's own constants.
"""
from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import create_model

from api.schemas import Closed, ErrorEnvelope
from engine.kernels.codes import STOP_REASONS
from engine.rubric import DIMENSIONS, STATS
from engine.rules import RESOURCES
from orchestrator.grading.states import STATUSES as GRADING_STATUSES
from orchestrator.runs.admission.body import PROVIDERS, Seat
from orchestrator.runs.lifecycle import STATUSES
from orchestrator.runs.series.stopping import BUDGET, CANCELLED, CEILING, PRECISE, SERIES_STOPPED
from orchestrator.runs.series.until import Until

Status = Literal[STATUSES]
GradingStatus = Literal[GRADING_STATUSES]
StopReason = Literal[(*STOP_REASONS, SERIES_STOPPED)]
Provider = Literal[PROVIDERS]
Funding = Literal["account", "platform", "free"]
Reasoning = Seat.model_fields["reasoning"].annotation
Format = Seat.model_fields["format"].annotation
SeedSource = Literal["scenario", "run", "series", "drawn"]
SeedMode = Literal["vary", "pinned"]
Number = Union[int, float]


class Range(Closed):
    low: float
    high: float


class MsRange(Closed):
    low: int
    high: int


# --- the run view (CONTRACT.md section 3) ----------------------------------------------------------

class RunLive(Closed):
    tick: int
    season_ticks: int


class RunLinks(Closed):
    match: str
    log: str
    replay: str


class RunSpend(Closed):
    usd: float
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


class ForkOf(Closed):
    """What a fork plays on from (CONTRACT.md section 16): the original run and match, the tick, the
    continuation seed (null: the original's own streams) and the arm of a series with control."""
    run_id: str
    match_id: str
    tick: int
    continuation_seed: int | None
    arm: Literal["fork", "control"]


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
    """An arena game's as-played configuration: first_seat moved first (CONTRACT.md section 11)."""
    season_ticks: int
    env: ArenaEnv
    seed: int
    seed_source: SeedSource
    spawn_seed: int
    spawn_seed_source: SeedSource
    first_seat: int
    hash: str
    fork: None = None  # arena games do not fork


class SkillPlayed(Closed):
    id: str
    name: str
    text: str


class SeatUsage(Closed):
    agent_turns: int
    input_tokens: int
    output_tokens: int
    usd: float


class SeatTurns(Closed):
    """A model seat's turn counts (CONTRACT.md section 12)."""
    answered: int
    invalid: int
    timed_out: int
    provider_errors: int
    retries: int


class RosterSeat(Closed):
    """The seat as sent, resolved; usage and turns update while the run plays."""
    seat: int
    name: str
    model: str
    provider: Provider
    funding: Funding
    reasoning: Reasoning | None  # unset: nothing is sent, the provider's default applies
    temperature: float | None
    max_tokens: int | None
    format: Format
    skills: list[SkillPlayed]
    instructions: str | None
    scaffold: str
    usage: SeatUsage
    turns: SeatTurns | None
    replied: bool = None  # model seats of an ended run: whether the model answered any turn
    note: str = None      # local seats sent skills or instructions: why they are ignored


class RunGrading(Closed):
    """Decision grading's progress (CONTRACT.md section 14): total counts the match's decisions once
    it is read (0 before); done with graded < total when some could not be graded."""
    status: GradingStatus
    graded: int
    total: int


class Run(Closed):
    run_id: str
    match_id: str | None
    name: str
    status: Status
    scenario_id: str
    scenario_hash: str
    batch_id: str | None
    created_at_ms: int
    started_at_ms: int | None
    finished_at_ms: int | None
    live: RunLive | None
    links: RunLinks | None
    error: ErrorEnvelope | None
    effective: Union[Effective, ArenaEffective]
    roster: list[RosterSeat]
    spend: RunSpend
    agent_turns: RunTurns
    stop_reason: StopReason | None
    grading: RunGrading | None = None  # null: the run grades no decisions


# --- results (SPEC.md "Results object", docs/RUBRIC.md; arena games CONTRACT.md section 11) -------

Dimensions = create_model("Dimensions", __base__=Closed, **{d: (float, ...) for d in DIMENSIONS})
AgentStats = create_model("AgentStats", __base__=Closed,
                          **{s: (float if s == "net_worth" else int, ...) for s in STATS})


class TopModel(Closed):
    name: str
    model: str


class Scorecard(Closed):
    """What every seat's scorecard holds, in the world and in arena games."""
    seat: int
    name: str
    model: str
    rank: int
    fitness_index: float
    grade: str
    archetype: str
    status: str
    epilogue: str
    replied: bool = None  # model seats: false when the provider never answered a turn


class DecisionSummary(Closed):
    """A graded seat's decisions (CONTRACT.md section 14, docs/RUBRIC.md)."""
    grader: str
    graded: int
    accuracy: float
    mean_regret: float
    inaccuracies: int
    mistakes: int
    blunders: int


class AgentResult(Scorecard):
    """One agent's scorecard in the world (engine/rubric.py)."""
    crafter_score: float
    dimensions: Dimensions
    achievements: list[str]
    stats: AgentStats
    decisions: DecisionSummary | None = None  # seats only: null until graded, or when not graded


class ForkedFrom(Closed):
    run_id: str
    tick: int


class Results(Closed):
    rubric: str
    agents: list[AgentResult]
    anchors: list[AgentResult]
    match_ticks: int
    top_model: TopModel | None
    field_size: int
    fork: ForkedFrom | None = None  # a fork's original run and the tick it played on from


class ChessDimensions(Closed):
    accuracy: float
    acpl: float
    blunders: int
    mistakes: int
    inaccuracies: int
    legal_rate: float


class ConnectFourDimensions(Closed):
    optimal_rate: float
    blunders: int
    inaccuracies: int
    legal_rate: float


class ArenaAgentResult(Scorecard):
    crafter_score: None
    dimensions: Union[ChessDimensions, ConnectFourDimensions]
    side: str
    fitness_measure: Literal["accuracy"]  # fitness_index is the seat's move accuracy, not its result
    grade_note: str  # the result, and that the grade is for the moves' accuracy, with the letters' floors


class Oracle(Closed):
    engine: str
    version: str
    nodes: int | None


class ArenaGame(Closed):
    id: str
    result: str
    termination: str
    plies: int
    oracle: Oracle
    first_seat: int
    pgn: str = None  # chess only


class ArenaResults(Closed):
    rubric: str
    agents: list[ArenaAgentResult]
    anchors: list[ArenaAgentResult]
    match_ticks: int
    top_model: TopModel
    field_size: int
    game: ArenaGame


AnyResults = Union[Results, ArenaResults]


# --- answers -------------------------------------------------------------------------------------

class EstimateSeat(Closed):
    seat: int
    name: str
    model: str
    provider: Provider
    funding: Funding
    priced: Literal["table", "fallback", "free", "key"]


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
    # with `until` (CONTRACT.md section 17): the trials a series stopped by it plays at the reference spread
    expected_trials: int | None = None


class EstimateGrading(Closed):
    """What grading the launch's decisions costs (CONTRACT.md section 14): decisions it may grade at most
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


class Interval(Closed):
    """analytics.stats.Interval: null bounds where too few observations give none."""
    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    confidence: float


class ConfidenceSequence(Closed):
    """The anytime-valid 95% confidence sequence of the mean (analytics.sequence), after the trials
    scored so far in the order they ended (CONTRACT.md section 17)."""
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
    """analytics.summary.series_summary by seat."""
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
    metric, with its 95% interval over n complete pairs (CONTRACT.md section 16)."""
    seat: int
    metric: str
    mean: float | None
    low: float | None
    high: float | None
    n: int
    method: str


class BatchView(Closed):
    batch_id: str
    status: Status
    trials: int
    seed_mode: SeedMode
    batch_seed: int
    run_ids: list[str]
    counts: dict[Status, int]
    until: Until | None
    budget_usd: float | None
    stopped: Literal[PRECISE, CEILING, BUDGET, CANCELLED] | None
    spent_usd: float
    summary: BatchSummary
    effect: list[Effect] | None = None  # a forked series with control only


class BatchOne(Closed):
    batch: BatchView


class Paid(Closed):
    account: float
    platform: float


class ModelUsage(Closed):
    model: str
    provider: Provider
    funding: Funding
    agent_turns: int
    input_tokens: int
    output_tokens: int
    usd: float


class RunUsage(Closed):
    run_id: str
    name: str
    status: Status
    usd: Paid
    agent_turns: int


class Month(Closed):
    month: str
    usd: Paid
    by_model: list[ModelUsage]
    runs: list[RunUsage]


class TurnAllowance(Closed):
    used: int
    held: int
    remaining: int | None
    limit: int | None


class Used(Closed):
    used: int
    limit: int


class CapRange(Closed):
    min: float
    max: float


class TokenAllowance(Closed):
    active: int
    limit: int


class Allowances(Closed):
    agent_turns: TurnAllowance
    queued_runs: Used
    spend_cap_usd: CapRange
    access_tokens: TokenAllowance
    requests_per_minute: int


class Usage(Closed):
    months: list[Month]
    allowances: Allowances


class Turn(Closed):
    """One model turn (CONTRACT.md section 12): world actions are objects, arena moves strings."""
    tick: int
    seat: int
    reply: str | None
    actions: list[Union[dict[str, Any], str]]
    refused: list[str]
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    error: str | None
    refusal: str | None = None  # the model refused: its refusal text
    truncated: bool = None      # the reply was cut by its token ceiling
    submitted_by: str | None = None  # an agent seat's turn: "token:<prefix>" or "console:<handle>"


class Transcript(Closed):
    turns: list[Turn]
    next_cursor: str | None


class DecisionTurn(Closed):
    """One graded decision: the turn taken and the best candidate, their values at the horizon (0..100)."""
    tick: int
    seat: int
    chosen: list[dict[str, Any]]
    value: float
    best: list[dict[str, Any]]
    best_value: float
    regret: float
    accuracy: float
    label: Literal["inaccuracy", "mistake", "blunder"] | None


class Decisions(Closed):
    grader: str
    horizon_ticks: int
    rollouts: int
    status: GradingStatus | None
    turns: list[DecisionTurn]
    next_cursor: str | None


# --- analysis (orchestrator/runs/analysis.py) ------------------------------------------------------

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
    """export_run's answer: the file GET /api/v1/runs/:id/export (or /batches/:id/export) serves, as base64."""
    id: str
    format: Literal["csv", "parquet", "inspect"]
    filename: str
    media_type: str
    size_bytes: int
    base64: str
