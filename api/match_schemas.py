"""Response shapes of the public match pages (/api/matches/:id/...): the report, the arena log, the
replay frames and the live events, as orchestrator/runs/pages/world.py and arena.py build them."""
from __future__ import annotations

from typing import Literal, Union

from pydantic import create_model

from api.result_schemas import ArenaResults, Results
from api.run_schemas import Status, StopReason
from api.schemas import Closed, as_recorded
from orchestrator.records import roster

# A world replay frame's agent: [x, y, alive, health, satiety, net worth (null while live)], then, when the
# replay's `holdings` names them, what it holds: wood, stone, food, ore, relics, shelter, tool.
AgentState = list[Union[int, float, bool, None]]


PublicSeat = create_model(
    "PublicSeat", __base__=Closed,
    __doc__="""A seat on the public record: built-in skills by id, own skills only counted.""",
    **as_recorded(roster.Seat, "seat", "name", "model", "provider", "scaffold"),
    skills=(list[str], ...),
    own_skills=(int, ...),
    instructions=(bool, ...),
)


class SeatDecisions(Closed):
    """A graded seat on the public report: its decision summary and regret per tick, [tick, regret]."""
    seat: int
    name: str
    grader: str
    graded: int
    accuracy: float
    mean_regret: float
    inaccuracies: int
    mistakes: int
    blunders: int
    regret: list[list[float]]


class PublicDecisions(Closed):
    grader: str
    horizon_ticks: int
    rollouts: int
    seats: list[SeatDecisions]


class ForkedMatch(Closed):
    """docs/FORKS.md: the public record of a fork's original (its report: /api/matches/:id/report)."""
    match_id: str
    tick: int


class Report(Closed):
    match_id: str
    name: str
    status: Status
    scenario_id: str
    scenario_hash: str
    config_hash: str
    season_ticks: int
    seed: int
    spawn_seed: int
    started_at_ms: int | None
    finished_at_ms: int | None
    stop_reason: StopReason | None
    roster: list[PublicSeat]
    results: Results | None
    decisions: PublicDecisions | None = None  # a done grading (docs/RUBRIC.md); never a reply
    fork: ForkedMatch | None = None  # a fork: the original match and the tick it played on from
    bundle: str | None = None  # the result bundle's path (its owner's token), once the run has ended


class ChessMove(Closed):
    ply: int
    seat: int
    uci: str
    san: str
    fen_before: str
    eval_before_cp: int
    eval_after_cp: int
    score_before: str
    score_after: str
    best_uci: str | None
    best_san: str | None
    win_before: float
    win_after: float
    drop: float
    accuracy: float
    label: str
    note: str | None


class ConnectFourMove(Closed):
    ply: int
    seat: int
    column: int
    scores: list[int | None]
    label: str


Move = Union[ChessMove, ConnectFourMove]


class ChessGraph(Closed):
    white_win_percent: list[float]


class ConnectFourGraph(Closed):
    first_outcome: list[int]


class ArenaReport(Closed):
    match_id: str
    name: str
    status: Status
    scenario_id: str
    config_hash: str
    seed: int
    first_seat: int
    started_at_ms: int | None
    finished_at_ms: int | None
    stop_reason: StopReason | None
    roster: list[PublicSeat]
    results: ArenaResults | None
    moves: list[Move]
    graph: Union[ChessGraph, ConnectFourGraph, None]
    bundle: str | None = None  # the result bundle's path (its owner's token), once the run has ended


class ArenaLog(Closed):
    """An arena match's play-by-play: the graded move list."""
    match_id: str
    game: str
    status: Status
    moves: list[Move]


class FieldAgent(Closed):
    name: str
    label: str
    model: str
    anchor: bool
    color: str


class Frame(Closed):
    """Every agent's state at the end of `tick` (the last frame: at the stop, as the log's closing rows)."""
    tick: int
    agents: list[AgentState]


class Moment(Closed):
    """A timeline mark under the replay: a raid (won or failed), a settled trade, an offer made or
    declined, a shelter built, a tool crafted, a message, a starvation."""
    tick: int
    agent: int
    kind: Literal["raid", "trade", "offer", "decline", "build", "craft", "say", "starve"]
    text: str
    won: bool = None  # raids only


class PageLinks(Closed):
    report: str
    log: str
    replay: str


class Replay(Closed):
    """A world match's replay: the map, the field, every tick's frame and the timeline, and how much of
    the season was played (`ticks_played` once archived) and why it stopped. A match not yet archived
    has no frames (and, until it plays, no map); `legend` comes with the map, `kinds` with the frames.
    `moments` lists the timeline's kinds; `holdings` names what a frame's agent carries after net worth
    (empty when the frames are read from the log alone)."""
    match_id: str
    status: Status
    season_ticks: int
    ticks_played: int | None
    stop_reason: StopReason | None
    terrain: list[str]
    legend: dict[str, str] = None
    agents: list[FieldAgent]
    frames: list[Frame]
    events: list[Moment]
    moments: list[str]
    holdings: list[str]
    kinds: list[str] = None
    links: PageLinks


class ArenaReplay(Closed):
    """Every position from the start: chess FENs, or Connect Four grids (0 empty, 1 first, 2 second)."""
    match_id: str
    game: str
    status: Status
    frames: Union[list[str], list[list[list[int]]]]
    moves: list[Move]


class LiveProgress(Closed):
    """One live event's data: the match's status and tick; `frame` is where its agents stand while it
    plays on this server (as a replay frame), else null."""
    status: Status
    tick: int
    season_ticks: int
    frame: Frame | None
