"""Playing one arena game to its end, then grading every move (docs/ARENA.md).

A seat is anything with `answer(position, feedback) -> str | None`: the game's scripted seats, or
model seats from the orchestrator. None means the turn timed out. An illegal or unreadable answer is
asked again with the reason, twice at most; the third in one turn forfeits. A seat whose provider
fails raises, and the exception ends the game unscored (the caller fails the run).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from engine.arena import results
from engine.arena.games import GAMES

RETRIES = 2


class Tools:
    """The oracles and engines one process reuses across games: Stockfish processes (opened on first
    use: a pool of grading engines, stockfish.Pool, sized by `grade_engines` or by the idle cores, and
    one playing engine)
    and the Connect Four solver with its book and table."""

    def __init__(self, grade_engines: int | None = None):
        self.grade_engines = grade_engines
        self._engines: dict[str, object] = {}

    def grader(self):
        if "grade" not in self._engines:
            from engine.arena.stockfish import Pool

            self._engines["grade"] = Pool(self.grade_engines)
        return self._engines["grade"]

    def player_engine(self):
        if "play" not in self._engines:
            from engine.arena.stockfish import Engine

            self._engines["play"] = Engine()
        return self._engines["play"]

    @functools.cache
    def solver(self):
        from engine.arena.solver import Solver

        return Solver()

    def close(self) -> None:
        for e in self._engines.values():
            e.close()
        self._engines.clear()


def seat_seed(seed: int, seat: int) -> int:
    return int(np.random.SeedSequence([seed, seat]).generate_state(1, np.uint64)[0])


def play(game_id: str, seats: list[dict], *, first_seat: int = 0, seed: int = 0, tools: Tools,
         answerers: dict[int, object] | None = None, should_stop: Callable[[], bool] = lambda: False,
         on_ply: Callable[[int], None] = lambda p: None, grade_nodes: int | None = None) -> dict:
    """Play and grade one game. seats: [{name, model}] (2 of them); answerers: seat index -> a model
    seat for the seats not scripted. Returns {results, moves, turns}."""
    game = GAMES[game_id]
    answerers = dict(answerers or {})
    for i, s in enumerate(seats):
        if i not in answerers:
            answerers[i] = game.policy(s["model"], np.random.default_rng(seat_seed(seed, i)), tools)
    position = game.new()
    order = [first_seat, 1 - first_seat]
    turns = [{"answers": 0, "illegal": 0, "timed_out": 0} for _ in seats]
    played: list[dict] = []
    forfeit = None
    end = position.outcome()
    while end is None:
        if should_stop():
            end = ("*", "cancelled")
            break
        seat = order[position.plies % 2]
        feedback = None
        move = None
        for _ in range(RETRIES + 1):
            answer = answerers[seat].answer(position, feedback)
            turns[seat]["answers"] += 1
            if answer is None:
                turns[seat]["timed_out"] += 1
                turns[seat]["illegal"] += 1
                feedback = "the turn timed out"
                continue
            if answer.strip().strip(".").lower() == "resign":
                break
            move, feedback = position.parse(answer)
            if move is not None:
                break
            turns[seat]["illegal"] += 1
        if move is None:
            resigned = answer is not None and answer.strip().strip(".").lower() == "resign"
            first_lost = seat == first_seat
            end = ("0-1" if first_lost else "1-0", "resignation" if resigned else "forfeit")
            forfeit = None if resigned else seat
            break
        entry = position.push(move)
        played.append({"ply": position.plies, "seat": seat, **entry})
        on_ply(position.plies)
        end = position.outcome()
    result, termination = end
    graded, oracle = game.grade(position, termination, tools, grade_nodes)
    record = game.record(position, [seats[first_seat]["name"], seats[1 - first_seat]["name"]], result)
    moves = [{"ply": p["ply"], "seat": p["seat"], **g} for p, g in zip(played, graded)]
    res = results.build(game, seats, first_seat, moves, result, termination, turns, oracle, record, forfeit)
    return {"results": res, "moves": moves, "turns": turns}
