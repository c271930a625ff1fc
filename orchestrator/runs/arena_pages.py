"""Public pages of arena matches (CONTRACT.md section 11): the graded move list as the log, the
report with its evaluation series, and replay frames (the position after every ply)."""
from __future__ import annotations

import json

import chess

from engine.arena import CHESS, GAMES
from engine.arena.connect4 import grid
from engine.arena.grading import white_wins
from orchestrator.arena_playing import read_game
from orchestrator.core import Core
from orchestrator.runs.pages import _public_seat, _row


def is_arena(core: Core, match_id: str) -> bool:
    return _row(core, match_id)["scenario_id"] in GAMES


def log(core: Core, match_id: str) -> dict:
    row = _row(core, match_id)
    game = read_game(core.data_dir, match_id)
    return {"match_id": match_id, "game": row["scenario_id"], "status": row["status"],
            "moves": game["moves"] if game else []}


def report(core: Core, match_id: str) -> dict:
    row = _row(core, match_id)
    eff = json.loads(row["effective"])
    game = read_game(core.data_dir, match_id)
    moves = game["moves"] if game else []
    graph = None
    if row["scenario_id"] == CHESS and moves:
        graph = {"white_win_percent": [round(w, 2) for w in white_wins(moves)]}
    elif moves:  # Connect Four: the first mover's outcome (1 win, 0 draw, -1 loss) after each ply
        graph = {"first_outcome": [_c4_outcome(m) for m in moves]}
    return {"match_id": match_id, "name": row["name"], "status": row["status"], "scenario_id": row["scenario_id"],
            "config_hash": eff["hash"], "seed": eff["seed"], "first_seat": eff["first_seat"],
            "started_at_ms": row["started_at_ms"], "finished_at_ms": row["finished_at_ms"],
            "stop_reason": row["stop_reason"], "roster": [_public_seat(s) for s in json.loads(row["roster"])],
            "results": json.loads(row["results"]) if row["results"] else None, "moves": moves, "graph": graph}


def _c4_outcome(move: dict) -> int:
    s = move["scores"][move["column"] - 1]
    sign = (s > 0) - (s < 0)
    return sign if move["ply"] % 2 == 1 else -sign


def frames(core: Core, match_id: str) -> dict:
    """Every position from the start: chess FENs, Connect Four grids (0 empty, 1 first, 2 second)."""
    row = _row(core, match_id)
    game = read_game(core.data_dir, match_id)
    moves = game["moves"] if game else []
    if row["scenario_id"] == CHESS:
        board = chess.Board()
        out = [board.fen()]
        for m in moves:
            board.push_uci(m["uci"])
            out.append(board.fen())
    else:
        cols = [m["column"] - 1 for m in moves]
        out = [grid(cols[:k]) for k in range(len(cols) + 1)]
    return {"match_id": match_id, "game": row["scenario_id"], "status": row["status"], "frames": out,
            "moves": moves}
