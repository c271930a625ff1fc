"""The chess oracle on known positions, and lichess's formulas."""
import pytest

from engine.arena import lichess
from engine.arena.games.chess import Position, grade


def _graded(tools, ucis, termination="resignation"):
    game = Position()
    for u in ucis:
        move, why = game.parse(u)
        assert move is not None, why
        game.push(move)
    return grade(game, termination, tools.grader())


def test_mate_in_one_is_best_and_the_move_allowing_it_a_blunder(tools):
    # the scholar's mate: 3...Nf6?? allows Qxf7#
    moves = _graded(tools, ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"], termination="checkmate")
    assert moves[5]["label"] == "blunder" and moves[5]["eval_after_cp"] == -1000
    assert moves[6]["best_uci"] == "h5f7" and moves[6]["label"] == "best"
    assert moves[6]["eval_before_cp"] == 1000 and moves[6]["eval_after_cp"] == 1000
    assert moves[6]["accuracy"] == 100.0


def test_a_hung_queen_is_a_blunder(tools):
    moves = _graded(tools, ["e2e4", "e7e5", "d1h5", "b8c6", "h5e5"])
    last = moves[-1]
    assert last["label"] == "blunder" and last["eval_after_cp"] < -500 and last["accuracy"] < 20


def test_grading_is_deterministic(tools):
    line = ["d2d4", "d7d5", "c2c4", "e7e6", "b1c3", "g8f6", "c1g5", "f8e7"]
    assert _graded(tools, line) == _graded(tools, line)


def test_lichess_formulas():
    assert lichess.win_percent(0) == 50
    assert lichess.win_percent(5000) == lichess.win_percent(1000) == pytest.approx(97.5, abs=0.1)
    assert lichess.move_accuracy(60, 60) == 100 and lichess.move_accuracy(60, 70) == 100
    assert lichess.move_accuracy(100, 0) == 0
    # a 10-point drop: 103.1668 * exp(-0.4354) - 3.1669 + 1 = 64.6
    assert lichess.move_accuracy(60, 50) == pytest.approx(64.62, abs=0.05)
    assert [lichess.label_of_drop(d) for d in (4.9, 5, 10, 15)] == [None, "inaccuracy", "mistake", "blunder"]
    white, black = lichess.game_accuracy([50, 50, 50, 50, 50])
    assert white == black == 100
    white, black = lichess.game_accuracy([50, 20, 20, 20, 20])  # white's first move gave away 30 points
    assert black == 100 and white < 100
