"""A graded chess game as annotated PGN: read back by python-chess, every move's evaluation, label
and the oracle's move are the graded ones."""
import io

import chess
import chess.pgn
from chess.engine import Cp, Mate

from engine.arena import pgn
from engine.arena.games import GAMES
from engine.arena.play import play
from tests.arena.conftest import seats

NODES = 5_000
TAGS = {"Event": "e", "Site": "s", "Date": "2026.11.28", "Round": "-", "White": "w", "Black": "b"}


def check_round_trip(text: str, moves: list[dict]) -> chess.pgn.Game:
    """Reads `text` back and checks each main-line node against its graded move; returns the game."""
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None and not game.errors
    node = game
    for m in moves:
        parent, node = node, node.next()
        assert node.move.uci() == m["uci"] and parent.board().san(node.move) == m["san"]
        mover = parent.turn()
        after = pgn.score_of(m["score_after"], m["eval_after_cp"])
        if after == Mate(0):  # the game is over: no eval, as lichess writes it
            assert node.eval() is None
        else:
            assert node.eval().pov(mover) == after
        assert node.nags == ({pgn.NAGS[m["label"]]} if m["label"] in pgn.NAGS else set())
        alternatives = parent.variations[1:]
        if m["best_uci"] != m["uci"]:
            assert [v.move.uci() for v in alternatives] == [m["best_uci"]]
            assert alternatives[0].eval().pov(mover) == pgn.score_of(m["score_before"], m["eval_before_cp"])
        else:
            assert alternatives == []
    assert node.is_end()
    return game


def test_a_graded_game_round_trips_with_evals_nags_and_best_moves(tools):
    out = play("arena:chess", seats("local/stockfish-1", "local/random"), seed=3, tools=tools, grade_nodes=NODES)
    moves = out["moves"]
    result = out["results"]["game"]["result"]
    text = GAMES["arena:chess"].annotated_pgn(moves, {**TAGS, "Result": result})
    game = check_round_trip(text, moves)
    assert dict(game.headers) == {**TAGS, "Result": result}
    assert list(game.headers)[:7] == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
    labels = {m["label"] for m in moves}
    assert labels & {"inaccuracy", "mistake", "blunder"}, labels  # the random seat errs: NAGs are exercised
    assert "[%eval " in text and ("$4" in text or "$2" in text or "$6" in text)
    last = chess.Board(moves[-1]["fen_before"])
    last.push_uci(moves[-1]["uci"])
    assert game.end().board().fen() == last.fen()


def test_scores_read_back_from_their_text_mates_included():
    assert pgn.score_of("+35", 35) == Cp(35) and pgn.score_of("-1200", -1000) == Cp(-1200)
    assert pgn.score_of("#+3", 1000) == Mate(3) and pgn.score_of("#-2", -1000) == Mate(-2)
    assert pgn.score_of("#-0", -1000) == Mate(0)
    assert pgn.score_of(None, -240) == Cp(-240)  # a move graded before the text was kept


def test_lichess_notation_pawns_with_two_decimals_and_mates_as_hash():
    moves = [{"uci": "f2f3", "san": "f3", "eval_after_cp": -30, "score_after": "-30", "label": "inaccuracy",
              "eval_before_cp": 20, "score_before": "+20", "best_uci": "e2e4"},
             {"uci": "e7e5", "san": "e5", "eval_after_cp": 40, "score_after": "+40", "label": "good",
              "eval_before_cp": 30, "score_before": "+30", "best_uci": "e7e5"},
             {"uci": "g2g4", "san": "g4", "eval_after_cp": -1000, "score_after": "#-1", "label": "blunder",
              "eval_before_cp": -40, "score_before": "-40", "best_uci": "b1c3"},
             {"uci": "d8h4", "san": "Qh4#", "eval_after_cp": 1000, "score_after": "#-0", "label": "best",
              "eval_before_cp": 1000, "score_before": "#+1", "best_uci": "d8h4"}]
    text = pgn.annotated(moves, {"Result": "0-1"})
    body = text.split("\n\n", 1)[1]
    assert body.split() == ("1. f3 $6 { [%eval -0.30] } ( 1. e4 { [%eval 0.20] } ) 1... e5 { [%eval -0.40] } "
                            "2. g4 $4 { [%eval #-1] } ( 2. Nc3 { [%eval -0.40] } ) 2... Qh4# 0-1").split()
    check_round_trip(text, moves)


def test_connect_four_has_no_pgn():
    assert GAMES["arena:connect-four"].annotated_pgn([], TAGS) is None
