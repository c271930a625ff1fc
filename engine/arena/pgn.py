"""A graded chess game as annotated PGN, the way lichess exports one: each move's evaluation as a
`[%eval ...]` comment, its label as a NAG, the oracle's move as a variation. Built with python-chess's
own tree (chess.pgn), so the text is what every PGN reader expects."""
from __future__ import annotations

import chess
import chess.pgn
from chess.engine import Cp, Mate, PovScore, Score

# PGN Standard, section 10 (numeric annotation glyphs): ?! dubious, ? poor, ?? very poor
NAGS = {"inaccuracy": chess.pgn.NAG_DUBIOUS_MOVE, "mistake": chess.pgn.NAG_MISTAKE,
        "blunder": chess.pgn.NAG_BLUNDER}


def score_of(text: str | None, capped_cp: int) -> Score:
    """A graded score back from its text (str(Score): `+35`, `#-2`); a move graded before the text was
    kept has only lichess's capped centipawns."""
    if text is None:
        return Cp(capped_cp)
    return Mate(int(text[1:])) if text.startswith("#") else Cp(int(text))


def annotated(moves: list[dict], tags: dict[str, str]) -> str:
    """`moves`: the archived graded moves (docs/ARENA.md log entries), in play order.
    `tags`: the seven tags' values (missing ones stay PGN's unknowns) and any more to add. A move's
    [%eval] is the position after it, from White's side; after a mating move there is none (lichess
    writes none either: the game is over)."""
    game = chess.pgn.Game()
    game.headers.update(tags)
    node = game
    for m in moves:
        board = node.board()
        move = chess.Move.from_uci(m["uci"])
        child = node.add_variation(move)
        child.set_eval(PovScore(score_of(m.get("score_after"), m["eval_after_cp"]), board.turn))
        if m.get("label") in NAGS:
            child.nags.add(NAGS[m["label"]])
        best = m.get("best_uci")
        if best and best != m["uci"]:
            alt = node.add_variation(chess.Move.from_uci(best))
            alt.set_eval(PovScore(score_of(m.get("score_before"), m["eval_before_cp"]), board.turn))
        node = child
    return str(game) + "\n"
