"""`studio simulate --scenario arena:...` plays and grades one game in-process."""
import json

from api.cli import main


def test_simulate_prints_results_and_graded_moves(capsys):
    assert main(["simulate", "--scenario", "arena:connect-four", "--seats", "local/solver,local/random",
                 "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results"]["rubric"] == "arena-connect-four-1" and out["results"]["agents"][0]["status"] == "won"
    assert out["moves"] and set(out["moves"][0]) == {"ply", "seat", "column", "scores", "label"}
    assert main(["simulate", "--scenario", "arena:connect-four", "--seats", "local/solver,local/random",
                 "--seed", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == out


def test_simulate_chess_moves_carry_the_log_fields(capsys):
    assert main(["simulate", "--scenario", "arena:chess", "--seats", "local/stockfish-5,local/random",
                 "--seed", "7", "--json"]) == 0  # a short game: mate in 11 plies
    out = json.loads(capsys.readouterr().out)
    assert set(out["moves"][0]) == {"ply", "seat", "uci", "san", "fen_before", "eval_before_cp", "eval_after_cp",
                                    "score_before", "score_after", "best_uci", "best_san", "win_before", "win_after",
                                    "drop", "accuracy", "label", "note"}
    assert out["results"]["game"]["pgn"].startswith("[Event")


def test_simulate_refuses_a_seat_of_the_other_game(capsys):
    assert main(["simulate", "--scenario", "arena:chess", "--seats", "local/solver,local/random"]) == 2
    assert "not a chess seat" in capsys.readouterr().err
