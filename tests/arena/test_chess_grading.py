"""Chess grading ranks play: the random seat below Stockfish's levels in every game, the rule for
decided positions case by case, and the pool of engines grading exactly as one engine does."""
import chess
import pytest
from chess.engine import Cp, Mate

from engine.arena import lichess, saturation
from engine.arena.games.chess import Position, grade
from engine.arena.play import play
from engine.arena.stockfish import Engine, Pool
from tests.arena.conftest import seats

LEVELS = (1, 3, 8)
# each level against random once with each colour (level i % 3, colour i % 2): more games only repeat
# a pairing on another seed, at a Stockfish game and its grading apiece
GAMES = 2 * len(LEVELS)
NODES = 5_000  # grading budget here; the method is the one the service runs at 100k


def _game(i: int, tools) -> tuple[dict, dict]:
    """Game i: random against local/stockfish-(1, 3, 8) in turn, random white in even games."""
    level, first = LEVELS[i % len(LEVELS)], i % 2
    out = play("arena:chess", seats("local/random", f"local/stockfish-{level}"), seed=i, first_seat=first,
               tools=tools, grade_nodes=NODES)
    random, engine = out["results"]["agents"]
    return random, engine


def test_random_is_graded_below_the_engine_in_every_game_and_never_a_or_b(tools):
    for i in range(GAMES):
        random, engine = _game(i, tools)
        assert random["fitness_index"] < engine["fitness_index"], (i, random, engine)
        assert random["grade"] not in ("A+", "A", "B"), (i, random)
        assert random["archetype"] in ("Erratic", "Blunder-prone"), (i, random)


def test_the_rule_charges_decided_positions_and_spares_the_winning_side():
    charge = saturation.charge
    # a forced mate let go: lichess's MateLost judgement by the score after
    assert charge(Mate(3), Cp(1500))[0] == lichess.INACCURACY
    assert charge(Mate(3), Cp(800))[0] == lichess.MISTAKE
    assert charge(Mate(3), Cp(200))[0] == lichess.BLUNDER
    assert charge(Mate(3), Mate(5)) == (0.0, None)  # a longer mate is still a mate
    # walking into a forced mate from a lost position: lichess says inaccuracy, the rule a blunder
    assert lichess.advice(Cp(-1200), Mate(-4)) == "inaccuracy"
    drop, note = charge(Cp(-1200), Mate(-4))
    assert drop == lichess.BLUNDER and note == "walked into a forced mate (-1200 to #-4)"
    # a mate come sooner: an inaccuracy a move
    assert charge(Mate(-5), Mate(-2))[0] == 3 * lichess.INACCURACY
    assert charge(Mate(-2), Mate(-2)) == (0.0, None)
    # a queen given away at -1500: win% sees nothing (both beyond the cap), the rule a blunder
    assert lichess.win_percent(-1500) == lichess.win_percent(-2400)
    drop, note = charge(Cp(-1500), Cp(-2400))
    assert drop == pytest.approx(50 - lichess.win_percent(-900)) and drop > lichess.BLUNDER
    assert lichess.accuracy_of_drop(drop) < 20
    # the winning side may give back material and stay winning
    assert charge(Cp(2400), Cp(1500)) == (0.0, None)


def test_a_lost_sides_moves_cost_accuracy_in_the_log(tools):
    # white gives away its queen and rook for nothing: lost from move 3 on, and every later gift counts
    ucis = ["e2e4", "e7e5", "d1h5", "g8f6", "h5f7", "e8f7", "f1c4", "d7d5", "c4d5", "f6d5", "g1f3", "d5f4",
            "h1g1", "c8g4", "g1h1", "f8c5", "f3g5", "d8g5"]
    game = Position()
    for u in ucis:
        game.push(chess.Move.from_uci(u))
    moves = grade(game, "resignation", tools.grader(), NODES)
    assert all(m["eval_before_cp"] <= -500 for m in moves[6::2])  # white's moves once its queen is gone
    assert moves[-2]["label"] in ("mistake", "blunder") and moves[-2]["accuracy"] < 70, moves[-2]
    assert moves[-2]["note"].startswith("gave away") and "in a lost position" in moves[-2]["note"]
    assert moves[-2]["san"] == "Ng5+"
    for m in moves:  # the played and the best move both in SAN
        board = chess.Board(m["fen_before"])
        assert m["san"] == board.san(chess.Move.from_uci(m["uci"]))
        assert m["best_san"] == board.san(chess.Move.from_uci(m["best_uci"]))


def test_the_pool_grades_every_position_as_one_engine_does(tools):
    out = play("arena:chess", seats("local/stockfish-2", "local/random"), seed=3, tools=tools, grade_nodes=NODES)
    game = Position()
    for m in out["moves"]:
        game.push(chess.Move.from_uci(m["uci"]))
    end = out["results"]["game"]["termination"]
    with Engine() as one:
        want = grade(game, end, one, NODES)
    with Pool(3) as pool:
        assert grade(game, end, pool, NODES) == want
        assert len(pool.pids) == 3  # a size given is kept
    with Pool() as adaptive:  # sized by the idle cores at each grading, the extra engines closed after it
        assert grade(game, end, adaptive, NODES) == want
        assert len(adaptive.pids) == 1


def test_game_accuracy_as_lila():
    # one side loses everything on its first move: its accuracy 0 counts as 1 in the harmonic mean
    white, black = lichess.game_accuracy([100, 0, 0])
    assert black == 100 and white == pytest.approx((0 + 1) / 2)
    # weights: clamp(plies / 10, 2, 8) positions a window, the first windows repeated, clamped 0.5..12
    series = [50.0] * 31 + [10.0] * 10
    w = lichess.weights(series)
    assert len(w) == 40 and w[0] == w[1] == 0.5 and max(w) == 12


def test_a_draw_is_claimed_once_the_position_occurred_three_times_not_before():
    game = Position()
    for u in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"]:
        game.push(chess.Move.from_uci(u))
    assert game.board.can_claim_threefold_repetition()  # ...Ng8 would repeat the start a third time
    assert game.outcome() is None  # so the game goes on until it is played
    game.push(chess.Move.from_uci("f6g8"))
    assert game.outcome() == ("1/2-1/2", "threefold_repetition")
