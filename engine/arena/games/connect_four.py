"""Connect Four (bitboards in arena/connect4.py): the grid a seat is shown, the `local/solver`
seats, grading by the perfect solver, and the page's grids and solved-outcome graph."""
from __future__ import annotations

import re

from engine.arena import connect4 as c4
from engine.arena import policies
from engine.arena.game import Game

SCRIPTED = "local/solver, local/solver-N (N 1..9) and local/random"


class Position:
    def __init__(self):
        self.columns: list[int] = []  # 0-based
        self.pos = self.mask = 0
        self._won = False

    @property
    def plies(self) -> int:
        return len(self.columns)

    def playable(self) -> list[int]:
        return [c for c in range(c4.WIDTH) if not c4.column_full(self.mask, c)]

    def legal(self) -> list[str]:
        return [str(c + 1) for c in self.playable()]

    def text_grid(self) -> str:
        marks = ".XO"
        rows = [" ".join(marks[v] for v in row) for row in c4.grid(self.columns)]
        return "\n".join(rows + ["1 2 3 4 5 6 7"])

    def prompt(self) -> str:
        me = "X" if self.plies % 2 == 0 else "O"
        return (f"You play {me} in Connect Four (four in a row across, up or diagonally wins; "
                f"X moved first). Grid, top row first:\n{self.text_grid()}\n"
                f"Playable columns: {', '.join(self.legal())}\n"
                "Answer with one column number 1..7, or `resign`.")

    def state(self) -> dict:
        """The facts of prompt() as JSON, for a seat that reads JSON (an agent seat): grid rows top
        first, 0 empty, 1 X (the first mover's disc), 2 O."""
        return {"you": "X" if self.plies % 2 == 0 else "O", "grid": c4.grid(self.columns),
                "playable_columns": [c + 1 for c in self.playable()], "moves": [c + 1 for c in self.columns]}

    def parse(self, answer: str) -> tuple[int | None, str]:
        text = answer.strip().strip(".").strip()
        if not re.fullmatch(r"[1-7]", text):
            return None, f"'{text[:40]}' is not a column number 1..7"
        c = int(text) - 1
        if c4.column_full(self.mask, c):
            return None, f"column {c + 1} is full"
        return c, ""

    def push(self, c: int) -> dict:
        self.columns.append(c)
        self.pos, self.mask, _ = c4.from_moves(self.columns)
        # pos now holds the next mover's discs: the mover's are the rest of the mask
        self._won = bool(c4.four_in_row(self.pos ^ self.mask))
        return {"column": c + 1}

    def outcome(self) -> tuple[str, str] | None:
        if self._won:
            return ("1-0" if self.plies % 2 == 1 else "0-1"), "four_in_row"
        if self.plies == c4.CELLS:
            return "1/2-1/2", "board_full"
        return None


class SolverSeat:
    """Perfect play (depth None) or a depth-limited search; ties between equal moves drawn by the RNG."""

    def __init__(self, rng, solver=None, depth: int | None = None):
        self.rng, self.solver, self.depth = rng, solver, depth

    def answer(self, position: Position, feedback=None) -> str:
        from engine.arena.solver import shallow_column_scores

        scores = (self.solver.scores(position.columns) if self.depth is None
                  else shallow_column_scores(position.columns, self.depth))
        best = max(s for s in scores if s is not None)
        choices = [c for c, s in enumerate(scores) if s == best]
        return str(choices[int(self.rng.integers(len(choices)))] + 1)


def _sign(score: int) -> int:
    return (score > 0) - (score < 0)


def grade(position: Position, solver) -> list[dict]:
    out = []
    for i, c in enumerate(position.columns):
        scores = solver.scores(position.columns[:i])
        best = max(s for s in scores if s is not None)
        if scores[c] == best:
            label = "optimal"
        elif _sign(scores[c]) < _sign(best):
            label = "blunder"
        else:
            label = "inaccuracy"
        out.append({"column": c + 1, "scores": scores, "label": label})
    return out


def _lets_four_through(ply: int) -> int:
    """The score of a move at this ply (1-based) after which the opponent completes four at once:
    22 minus the opponent's discs then, as Pons counts."""
    return -((c4.CELLS - (ply - 1)) // 2)


def note(move: dict) -> str:
    """What a graded move did, in words the label alone does not carry: a position already lost, the
    outcome thrown away, a win slowed or a loss hastened, a four let through at once."""
    scores, mine = move["scores"], move["scores"][move["column"] - 1]
    best = max(s for s in scores if s is not None)
    words = []
    if best < 0:
        words.append("position already lost: every column loses"
                     + ("" if mine == best else ", and this one sooner than it had to"))
    elif _sign(mine) < _sign(best):
        words.append({(1, 0): "throws the win away: a draw now", (1, -1): "throws the win away: lost now",
                      (0, -1): "throws the draw away: lost now"}[_sign(best), _sign(mine)])
    elif mine < best:
        words.append("still wins, but later than it could")
    if mine == _lets_four_through(move["ply"]):
        words.append("lets four in a row through at once")
    return "; ".join(words)


LEGEND = ("Column scores: for each move, the solver's score of every column 1 to 7 for the side about to "
          "move, in the position before it moved (Pascal Pons' scale): positive, playing there wins, the "
          "larger the sooner (22 minus the winner's discs when four are made); 0, it draws with best play; "
          "negative, it loses, the more negative the sooner; - a full column. A move is optimal when its "
          "column has the best score, a blunder when it drops the outcome (a win to a draw or a loss, a "
          "draw to a loss), else an inaccuracy (the same outcome, a slower win or a quicker loss). When "
          "every score is negative the position was already lost: no column saves it, and the move says so.")


def first_outcome(move: dict) -> int:
    """The first mover's solved outcome after this move: 1 a win, 0 a draw, -1 a loss."""
    sign = _sign(move["scores"][move["column"] - 1])
    return sign if move["ply"] % 2 == 1 else -sign


class ConnectFour(Game):
    id = "arena:connect-four"
    title = "Connect Four"
    rubric = "arena-connect-four-1"
    moves_per_seat = (c4.CELLS + 1) // 2
    scripted_ms = (100, 5_000)
    scripted = SCRIPTED
    models = ("local/solver", "local/solver-3", "local/random")
    example = "local/solver,local/random"
    move_hint = "Connect Four a column 1..7"
    sides = ("first", "second")
    board = "grid"
    ends = {"four_in_row": "with four in a row", "board_full": "on a full board"}
    fitness = "optimal_rate"
    measure = "the share of its moves that the perfect solver rates optimal"
    legend = LEGEND

    def new(self) -> Position:
        return Position()

    def check(self, model: str) -> str | None:
        m = re.fullmatch(r"local/solver-(\d)", model)
        if model in ("local/random", "local/solver") or (m and 1 <= int(m.group(1)) <= 9):
            return None
        return f"'{model}' is not a Connect Four seat; scripted Connect Four seats: {self.scripted}"

    def policy(self, model: str, rng, tools):
        if model == "local/random":
            return policies.Random(rng)
        if model == "local/solver":
            return SolverSeat(rng, tools.solver())
        return SolverSeat(rng, depth=int(model.rsplit("-", 1)[1]))

    def grade(self, position: Position, termination: str, tools, nodes: int | None) -> tuple[list[dict], dict]:
        return grade(position, tools.solver()), {"engine": "studio-connect-four-solver", "version": "1", "nodes": None}

    def dimensions(self, moves: list[dict], mine: list[dict], first: bool, counts: dict) -> dict:
        optimal = sum(m["label"] == "optimal" for m in mine)
        rate = round(100 * optimal / len(mine), 2) if mine else 0.0
        return {"optimal_rate": rate, "blunders": counts["blunder"], "inaccuracies": counts["inaccuracy"]}

    def quality(self, fitness: float) -> str:
        return f"{fitness:.0f}% optimal moves"

    def graph(self, moves: list[dict]) -> dict:
        return {"first_outcome": [first_outcome(m) for m in moves]}

    def curve(self, graph: dict) -> tuple[list[float], float, float, str]:
        return ([0] + graph["first_outcome"], -1, 1,
                "The first mover's solved outcome after each ply (1 win, 0 draw, -1 loss)")

    def frames(self, moves: list[dict]) -> list[list[list[int]]]:
        cols = [m["column"] - 1 for m in moves]
        return [c4.grid(cols[:k]) for k in range(len(cols) + 1)]

    def move_words(self, move: dict) -> tuple[str, str]:
        scores = " ".join("-" if s is None else str(s) for s in move["scores"])
        words = note(move)
        return (f"{move['ply']}. seat {move['seat']}: column {move['column']}",
                (f"{words} " if words else "") + f"(column scores {scores})")


GAME = ConnectFour()
