"""Response shapes of a run's results (docs/RUBRIC.md; arena games
docs/ARENA.md), as api/run_schemas.py describes the run view."""
from __future__ import annotations

from typing import Literal, Union

from pydantic import create_model

from api.schemas import Closed
from engine.rubric import DIMENSIONS, STATS

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
    """A graded seat's decisions (docs/RUBRIC.md)."""
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
