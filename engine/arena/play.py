"""Playing one arena game to its end, then grading every move (CONTRACT.md section 11).

A seat is anything with `answer(game, feedback) -> str | None`: scripted policies here, model
seats from orchestrator.seats. None means the turn timed out. An illegal or unreadable answer is
asked again with the reason, twice at most; the third in one turn forfeits. A seat whose provider
fails raises, and the exception ends the game unscored (the caller fails the run).
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from engine.arena import grading, policies, results
from engine.arena.games import CHESS, new_game

RETRIES = 2


class Tools:
    """The oracles and engines one process reuses across games: Stockfish processes (opened on first
    use) and the Connect Four solver with its book and table."""

    def __init__(self):
        self._engines: dict[str, object] = {}

    def _engine(self, role: str):
        if role not in self._engines:
            from engine.arena.stockfish import Engine

            self._engines[role] = Engine()
        return self._engines[role]

    def grader(self):
        return self._engine("grade")

    def player_engine(self):
        return self._engine("play")

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
    answerers = dict(answerers or {})
    for i, s in enumerate(seats):
        if i not in answerers:
            answerers[i] = policies.make(game_id, s["model"], seat_seed(seed, i), tools)
    game = new_game(game_id)
    order = [first_seat, 1 - first_seat]
    turns = [{"answers": 0, "illegal": 0, "timed_out": 0} for _ in seats]
    played: list[dict] = []
    forfeit = None
    end = game.outcome()
    while end is None:
        if should_stop():
            end = ("*", "cancelled")
            break
        seat = order[game.plies % 2]
        feedback = None
        move = None
        for _ in range(RETRIES + 1):
            answer = answerers[seat].answer(game, feedback)
            turns[seat]["answers"] += 1
            if answer is None:
                turns[seat]["timed_out"] += 1
                turns[seat]["illegal"] += 1
                feedback = "the turn timed out"
                continue
            if answer.strip().strip(".").lower() == "resign":
                break
            move, feedback = game.parse(answer)
            if move is not None:
                break
            turns[seat]["illegal"] += 1
        if move is None:
            resigned = answer is not None and answer.strip().strip(".").lower() == "resign"
            first_lost = seat == first_seat
            end = ("0-1" if first_lost else "1-0", "resignation" if resigned else "forfeit")
            forfeit = None if resigned else seat
            break
        entry = game.push(move)
        played.append({"ply": game.plies, "seat": seat, **entry})
        on_ply(game.plies)
        end = game.outcome()
    result, termination = end
    if game_id == CHESS:
        engine = tools.grader()
        nodes = grade_nodes or grading.GRADE_NODES
        graded = grading.grade_chess(game, termination, engine, nodes)
        oracle = {"engine": "stockfish", "version": engine.version, "nodes": nodes}
        names = [seats[first_seat]["name"], seats[1 - first_seat]["name"]]
        pgn = game.pgn(names[0], names[1], result)
    else:
        graded = grading.grade_connect_four(game, tools.solver())
        oracle = {"engine": "studio-connect-four-solver", "version": "1", "nodes": None}
        pgn = None
    moves = [{"ply": p["ply"], "seat": p["seat"], **g} for p, g in zip(played, graded)]
    res = results.build(game_id, seats, first_seat, moves, result, termination, turns, oracle, pgn, forfeit)
    return {"results": res, "moves": moves, "turns": turns}
