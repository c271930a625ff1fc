"""What one arena game declares (docs/ARENA.md).

Each game is a module of the games package holding one `Game`; the play loop, the results object,
admission, the match pages and the console read every per-game fact from it, so a new game is one
new module and one line in the registry table.
"""
from __future__ import annotations

from abc import ABC, abstractmethod


class Game(ABC):
    id: str                        # the scenario id a run launches it with
    title: str                     # its name in the console's picker
    rubric: str                    # results.rubric
    moves_per_seat: int            # its longest game in moves per seat: the run's "season" at admission
    scripted_ms: tuple[int, int]   # one game between scripted seats, low and high, for the estimate
    scripted: str                  # its scripted seats in words, for messages and the picker
    models: tuple[str, ...]        # scripted seats the picker suggests
    example: str                   # two seats that play it, as `studio simulate --seats` takes them
    move_hint: str                 # what a move looks like, for the model seats' `move` tool
    sides: tuple[str, str]         # the first and the second mover, as results.agents[].side
    board: str                     # the board the match page draws
    ends: dict[str, str]           # its own terminations, in words for the epilogue
    fitness: str                   # the dimension that is the fitness index
    measure: str                   # what that dimension measures, in words (results' grade_note)
    legend: str = ""               # what the page's move list says (labels, numbers), under the list
    notation: str | None = None    # its standard notation, which annotated_pgn writes (the report links it)

    def unavailable(self) -> str | None:
        """Why this server cannot play it (its oracle is missing), else None."""
        return None

    @abstractmethod
    def new(self):
        """The starting position: plies, legal(), prompt(), parse(answer), push(move), outcome()."""

    @abstractmethod
    def check(self, model: str) -> str | None:
        """Why `model` is not one of its scripted seats (None when it is)."""

    @abstractmethod
    def policy(self, model: str, rng, tools):
        """A scripted seat, answering `answer(position, feedback) -> str` as a model would; `tools`
        (the play loop's `Tools`) lends the shared engine or solver."""

    @abstractmethod
    def grade(self, position, termination: str, tools, nodes: int | None) -> tuple[list[dict], dict]:
        """(every move's log entry without ply and seat, the oracle {engine, version, nodes})."""

    def record(self, position, names: list[str], result: str) -> dict:
        """Fields results.game adds for this game; names: the first mover's, the second's."""
        return {}

    def annotated_pgn(self, moves: list[dict], tags: dict[str, str]) -> str | None:
        """The graded game in its own standard notation with the oracle's grades (chess: PGN);
        None for a game that has none."""
        return None

    @abstractmethod
    def dimensions(self, moves: list[dict], mine: list[dict], first: bool, counts: dict) -> dict:
        """A seat's dimensions but legal_rate, from the whole graded game and the seat's own moves;
        counts: its blunders, mistakes and inaccuracies."""

    @abstractmethod
    def quality(self, fitness: float) -> str:
        """The fitness index in the epilogue's words."""

    @abstractmethod
    def graph(self, moves: list[dict]) -> dict:
        """The report's evaluation series over a game with moves."""

    @abstractmethod
    def curve(self, graph: dict) -> tuple[list[float], float, float, str]:
        """The page's plot of `graph`: (points, low, high, caption)."""

    @abstractmethod
    def frames(self, moves: list[dict]) -> list:
        """Every position from the start, as the page's board draws it."""

    @abstractmethod
    def move_words(self, move: dict) -> tuple[str, str]:
        """A graded move in the page's list: the words before its label and after it."""
