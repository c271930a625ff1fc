"""Scripted arena seats, each seeded by the run: `local/random`, `local/stockfish-N` (chess),
`local/solver` and `local/solver-N` (Connect Four). Each answers exactly as a model would: a string."""
from __future__ import annotations

import re

import numpy as np

from engine.arena.games import CHESS, CONNECT_FOUR

CHESS_POLICIES = "local/stockfish-N (N 0..20) and local/random"
CONNECT_FOUR_POLICIES = "local/solver, local/solver-N (N 1..9) and local/random"


def check(game_id: str, model: str) -> str | None:
    """Why `model` is not a scripted seat of this game (None when it is)."""
    if game_id == CHESS:
        m = re.fullmatch(r"local/stockfish-(\d{1,2})", model)
        if model == "local/random" or (m and 0 <= int(m.group(1)) <= 20):
            return None
        return f"'{model}' is not a chess seat; scripted chess seats: {CHESS_POLICIES}"
    m = re.fullmatch(r"local/solver-(\d)", model)
    if model in ("local/random", "local/solver") or (m and 1 <= int(m.group(1)) <= 9):
        return None
    return f"'{model}' is not a Connect Four seat; scripted Connect Four seats: {CONNECT_FOUR_POLICIES}"


class Random:
    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def answer(self, game, feedback=None) -> str:
        legal = game.legal()
        return legal[int(self.rng.integers(len(legal)))]


class StockfishLevel:
    """Stockfish's own skill-level pick (search.cpp, Skill::pick_best) with the run's RNG instead of
    the clock's: 4 lines searched to depth N+1; each line gets a penalty that grows with weakness,
    plus a random share of the top lines' spread."""

    def __init__(self, level: int, rng: np.random.Generator, engine):
        self.level, self.rng, self.engine = level, rng, engine

    def answer(self, game, feedback=None) -> str:
        if self.level >= 20:
            return self.engine.candidates(game.board, depth=99, multipv=1)[0][1].uci()
        lines = self.engine.candidates(game.board, depth=self.level + 1, multipv=4)
        top = lines[0][0]
        delta = min(top - lines[-1][0], 100)
        weakness = 120 - 2 * self.level
        best, best_score = lines[0][1], -10 ** 9
        for cp, move in lines:
            push = (weakness * (top - cp) + delta * int(self.rng.integers(weakness))) // 128
            if cp + push >= best_score:
                best_score, best = cp + push, move
        return best.uci()


class Solver:
    """Perfect play (depth None) or a depth-limited search; ties between equal moves drawn by the RNG."""

    def __init__(self, rng: np.random.Generator, solver=None, depth: int | None = None):
        self.rng, self.solver, self.depth = rng, solver, depth

    def answer(self, game, feedback=None) -> str:
        from engine.arena.solver import shallow_column_scores

        scores = (self.solver.scores(game.columns) if self.depth is None
                  else shallow_column_scores(game.columns, self.depth))
        best = max(s for s in scores if s is not None)
        choices = [c for c, s in enumerate(scores) if s == best]
        return str(choices[int(self.rng.integers(len(choices)))] + 1)


def make(game_id: str, model: str, seed: int, tools) -> object:
    """A scripted seat; `tools` lends the shared Stockfish engine or solver (arena.oracle.Tools)."""
    rng = np.random.default_rng(seed)
    if model == "local/random":
        return Random(rng)
    if game_id == CHESS:
        return StockfishLevel(int(model.rsplit("-", 1)[1]), rng, tools.player_engine())
    if game_id == CONNECT_FOUR and model == "local/solver":
        return Solver(rng, tools.solver())
    return Solver(rng, depth=int(model.rsplit("-", 1)[1]))
