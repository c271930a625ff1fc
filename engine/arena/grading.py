"""Grading every move of a finished game with its oracle (CONTRACT.md section 11). Deterministic:
the same moves always get the same grades."""
from __future__ import annotations

import chess

from engine.arena import lichess
from engine.arena.games import Chess, ConnectFour
from engine.arena.stockfish import GRADE_NODES, MATE_CP

DRAWN_BY_RULE = ("stalemate", "insufficient_material", "threefold_repetition", "fifty_moves")


def grade_chess(game: Chess, termination: str, engine, nodes: int = GRADE_NODES) -> list[dict]:
    """Log entries (without ply/seat) for every move: evaluations from the mover's side."""
    board = chess.Board()
    evals: list[tuple[int, str | None]] = []
    for move in game.moves:
        evals.append(engine.evaluate(board, nodes))
        board.push(move)
    if board.is_checkmate():
        evals.append((-MATE_CP, None))
    elif termination in DRAWN_BY_RULE:
        evals.append((0, None))
    else:
        evals.append(engine.evaluate(board, nodes))
    out = []
    board = chess.Board()
    for i, move in enumerate(game.moves):
        before, best = evals[i]
        after = -evals[i + 1][0]
        wb, wa = lichess.win_percent(before), lichess.win_percent(after)
        out.append({"uci": move.uci(), "san": board.san(move), "fen_before": board.fen(),
                    "eval_before_cp": before, "eval_after_cp": after, "best_uci": best,
                    "win_before": round(wb, 2), "win_after": round(wa, 2),
                    "accuracy": round(lichess.move_accuracy(wb, wa), 2),
                    "label": lichess.label(wb, wa, move.uci() == best)})
        board.push(move)
    return out


def white_wins(entries: list[dict]) -> list[float]:
    """The win% series from white's side, one per position (for game accuracy and the graph)."""
    if not entries:
        return [lichess.win_percent(0)]
    series = [e["win_before"] if i % 2 == 0 else 100 - e["win_before"] for i, e in enumerate(entries)]
    last = entries[-1]["win_after"]
    series.append(last if len(entries) % 2 == 1 else 100 - last)
    return series


def _outcome(score: int) -> int:
    return (score > 0) - (score < 0)


def grade_connect_four(game: ConnectFour, solver) -> list[dict]:
    out = []
    for i, c in enumerate(game.columns):
        scores = solver.scores(game.columns[:i])
        best = max(s for s in scores if s is not None)
        if scores[c] == best:
            label = "optimal"
        elif _outcome(scores[c]) < _outcome(best):
            label = "blunder"
        else:
            label = "inaccuracy"
        out.append({"column": c + 1, "scores": scores, "label": label})
    return out
