"""Whole games: legality by independent replay, ends matching the position, determinism, the
solver's perfection, and the illegal-answer, forfeit and resignation rules."""
import chess
import pytest
from bitbully import Board

from engine.arena.play import play
from tests.arena.conftest import Scripted, seats

C4, CHESS = "arena:connect-four", "arena:chess"
FAST = 5_000  # grading nodes for whole-game tests; the oracle tests grade at the default 100k


def _replay_connect_four(out):
    board = Board()
    for m in out["moves"]:
        c = m["column"] - 1
        assert board.is_legal_move(c) and not board.has_win()
        board = board.play_on_copy(c)
    g = out["results"]["game"]
    if g["termination"] == "four_in_row":
        assert board.has_win()
        assert g["result"] == ("1-0" if len(out["moves"]) % 2 else "0-1")
    elif g["termination"] == "board_full":
        assert board.is_full() and not board.has_win() and g["result"] == "1/2-1/2"
    else:
        assert not board.has_win()


def _replay_chess(out):
    board = chess.Board()
    for m in out["moves"]:
        assert m["fen_before"] == board.fen()
        move = chess.Move.from_uci(m["uci"])
        assert move in board.legal_moves
        assert board.san(move) == m["san"]
        board.push(move)
    g = out["results"]["game"]
    o = board.outcome(claim_draw=True)
    if g["termination"] == "checkmate":
        assert board.is_checkmate() and g["result"] == o.result()
    elif g["termination"] in ("stalemate", "insufficient_material", "threefold_repetition", "fifty_moves"):
        assert o is not None and g["result"] == "1/2-1/2"
    elif g["termination"] == "ply_cap":
        assert len(out["moves"]) == 200 and g["result"] == "1/2-1/2"
    assert chess.pgn.read_game(__import__("io").StringIO(g["pgn"])).end().board().fen() == board.fen()


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("models", [("local/random", "local/random"), ("local/solver-3", "local/random"),
                                    ("local/random", "local/solver")])
def test_connect_four_games_replay_legally(tools, models, seed):
    out = play(C4, seats(*models), seed=seed, tools=tools)
    _replay_connect_four(out)
    assert all(len(m["scores"]) == 7 for m in out["moves"])


@pytest.mark.parametrize("first_seat", [0, 1])
def test_chess_games_replay_legally_and_sides_follow_first_seat(tools, first_seat):
    out = play(CHESS, seats("local/stockfish-2", "local/random"), seed=5, first_seat=first_seat, tools=tools,
               grade_nodes=FAST)
    _replay_chess(out)
    assert out["moves"][0]["seat"] == first_seat
    assert {a["side"] for a in out["results"]["agents"] if a["seat"] == first_seat} == {"white"}


def test_random_chess_reaches_the_ply_cap_or_a_rule_end(tools):
    out = play(CHESS, seats("local/random", "local/random"), seed=9, tools=tools, grade_nodes=FAST)
    _replay_chess(out)
    assert out["results"]["game"]["termination"] in ("checkmate", "stalemate", "insufficient_material",
                                                     "threefold_repetition", "fifty_moves", "ply_cap")


def test_same_seed_same_moves_and_grades(tools):
    a = play(CHESS, seats("local/stockfish-4", "local/random"), seed=21, tools=tools, grade_nodes=FAST)
    b = play(CHESS, seats("local/stockfish-4", "local/random"), seed=21, tools=tools, grade_nodes=FAST)
    assert a["moves"] == b["moves"] and a["results"] == b["results"]
    c = play(C4, seats("local/solver-4", "local/solver"), seed=21, tools=tools)
    d = play(C4, seats("local/solver-4", "local/solver"), seed=21, tools=tools)
    assert c == d


@pytest.mark.parametrize("opponent", ["local/random", "local/solver-5", "local/solver"])
@pytest.mark.parametrize("seed", [1, 2])
def test_solver_never_loses_first_and_every_move_is_optimal(tools, opponent, seed):
    out = play(C4, seats("local/solver", opponent), seed=seed, tools=tools)
    solver_seat = out["results"]["agents"][0]
    assert solver_seat["status"] == "won"
    assert all(m["label"] == "optimal" for m in out["moves"] if m["seat"] == 0)
    assert solver_seat["fitness_index"] == 100.0


def test_illegal_answers_are_re_asked_with_the_reason_then_forfeit(tools):
    bad = Scripted(["9", "column three", "4"])
    out = play(C4, seats("model/x", "local/random"), seed=1, tools=tools, answerers={0: bad})
    assert bad.asked[:3] == [None, "'9' is not a column number 1..7", "'column three' is not a column number 1..7"]
    assert out["moves"][0]["column"] == 4
    bad = Scripted(["e2e5", "Nf6", "hello"])
    out = play(CHESS, seats("model/x", "local/random"), seed=1, tools=tools, answerers={0: bad})
    r = out["results"]
    assert r["game"]["termination"] == "forfeit" and r["game"]["result"] == "0-1"
    assert [a["status"] for a in r["agents"]] == ["forfeit", "won"]
    assert r["agents"][0]["dimensions"]["legal_rate"] == 0.0 and r["agents"][0]["rank"] == 2
    assert len(bad.asked) == 3 and "not a legal move" in bad.asked[1]


def test_a_timeout_counts_as_one_illegal_answer(tools):
    slow = Scripted([None, None, "4"])
    out = play(C4, seats("model/x", "local/random"), seed=1, tools=tools, answerers={0: slow})
    assert slow.asked[1:3] == ["the turn timed out", "the turn timed out"]
    assert out["turns"][0]["timed_out"] == 2 and out["moves"][0]["column"] == 4


def test_resign_ends_the_game_for_the_other_side(tools):
    out = play(C4, seats("local/random", "model/x"), seed=1, tools=tools, answerers={1: Scripted(["resign"])})
    r = out["results"]
    assert r["game"]["termination"] == "resignation" and r["game"]["result"] == "1-0"
    assert [a["status"] for a in r["agents"]] == ["won", "lost"]
    assert r["game"]["plies"] == 1


def test_an_arena_seats_grade_says_it_grades_the_moves_not_the_result(tools):
    """A winner can grade low (docs/RUBRIC.md, Arena seats): its entry names the figure and says why."""
    out = play(C4, seats("local/random", "model/x"), seed=1, tools=tools, answerers={1: Scripted(["resign"])})
    won, lost = out["results"]["agents"]
    assert won["status"] == "won" and lost["status"] == "lost"
    for entry in (won, lost):
        assert entry["fitness_measure"] == "accuracy"
        assert "grades the quality of its moves, not the result" in entry["grade_note"]
        assert f"accuracy {entry['fitness_index']:.1f}%" in entry["grade_note"]
        assert "A+ from 90, A from 80, B from 70, C from 60, D from 50, else F" in entry["grade_note"]
    assert won["grade_note"].startswith(f"Won; {won['grade']} grades")
    assert lost["grade_note"].startswith(f"Lost; {lost['grade']} grades")


def test_results_archived_before_the_grade_note_gain_it_when_read(tools):
    import json
    from types import SimpleNamespace

    from orchestrator.runs.views import results_of

    out = play(C4, seats("local/solver", "local/random"), seed=1, tools=tools)
    old = json.loads(json.dumps(out["results"]))
    for entry in old["agents"]:
        del entry["fitness_measure"], entry["grade_note"]
    read = results_of(SimpleNamespace(results=old))  # a run's record as the store reads it, results parsed
    assert [a["grade_note"] for a in read["agents"]] == [a["grade_note"] for a in out["results"]["agents"]]
