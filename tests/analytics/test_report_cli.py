"""`studio report` through the real console entry point."""
import json

import pytest

from analytics.summary import series_summary
from api.cli import main


def test_report_json_is_the_series_summary_and_leaderboard(archive_dir, capsys):
    assert main(["report", "--data-dir", str(archive_dir), "--series", "bat_b", "--json", "--resamples", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    [world] = out["games"]  # a series plays one scenario, so one game
    assert world["game"] == "world" and out["left_out"]["failed_runs"] == 0
    assert world["summary"] == json.loads(json.dumps(series_summary(archive_dir, "bat_b")))
    assert world["leaderboard"]["n_matches"] == 12 and world["leaderboard"]["n_resamples"] == 50


def test_report_still_takes_the_old_batch_flag_without_listing_it(archive_dir, capsys):
    argv = ["report", "--data-dir", str(archive_dir), "--json", "--resamples", "20"]
    assert main([*argv, "--series", "bat_b"]) == 0
    by_series = json.loads(capsys.readouterr().out)
    assert main([*argv, "--batch", "bat_b"]) == 0
    assert json.loads(capsys.readouterr().out) == by_series
    with pytest.raises(SystemExit) as stopped:
        main(["report", "--help"])
    assert stopped.value.code == 0
    text = capsys.readouterr().out
    assert "--series" in text and "--batch" not in text


def test_report_table_lists_each_seat_with_its_interval(archive_dir, capsys):
    assert main(["report", "--data-dir", str(archive_dir), "--series", "bat_b", "--resamples", "20"]) == 0
    text = capsys.readouterr().out
    seats = series_summary(archive_dir, "bat_b")["seats"]
    for seat in seats:
        assert seat["name"] in text
        iv = seat["fitness_index"]
        assert f"{iv['estimate']:.1f} [{iv['low']:.1f}, {iv['high']:.1f}]" in text
    assert "World: Bradley-Terry leaderboard over 12 matches" in text


def test_report_over_runs_and_over_everything(archive_dir, capsys):
    runs = "run_bat_a_1,run_bat_a_2,run_bat_c_1"
    assert main(["report", "--data-dir", str(archive_dir), "--runs", runs, "--json", "--resamples", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"][0]["summary"]["runs"] == 3 and out["games"][0]["summary"]["scenario_ids"] == ["base", "lush"]
    assert main(["report", "--data-dir", str(archive_dir), "--all", "--json", "--resamples", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    [world] = out["games"]
    assert world["summary"]["by"] == "model"
    assert world["summary"]["models"] == json.loads(json.dumps(series_summary(archive_dir, by="model")))["models"]


def test_report_errors_exit_2_with_a_message(archive_dir, tmp_path, capsys):
    assert main(["report", "--data-dir", str(archive_dir), "--series", "bat_zzz"]) == 2
    assert "no archived matches for series bat_zzz" in capsys.readouterr().err
    assert main(["report", "--data-dir", str(tmp_path / "absent"), "--all"]) == 2
    assert "no data dir" in capsys.readouterr().err


def test_report_all_keeps_each_game_apart_and_leaves_failed_runs_out(mixed_dir, capsys):
    """It ranked local/solver against world agents, showed arena seats with "survival 0 [0,79]", averaged
    a model's scores over games, and counted a failed 2-tick run."""
    assert main(["report", "--data-dir", str(mixed_dir), "--all", "--json", "--resamples", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    world, c4 = out["games"]
    assert (world["game"], c4["game"]) == ("world", "arena:connect-four")
    assert {r["model"] for r in c4["leaderboard"]["rows"]} == {"local/solver", "local/random"}
    assert not {r["model"] for r in world["leaderboard"]["rows"]} & {"local/solver"}
    assert {m["model"] for m in c4["summary"]["models"]} == {"local/solver", "local/random"}
    # local/random plays in both: each game's summary holds only that game's matches
    random_c4 = next(m for m in c4["summary"]["models"] if m["model"] == "local/random")
    assert random_c4["n"] == 6 and c4["summary"]["scenario_ids"] == ["arena:connect-four"]
    assert world["summary"]["runs"] == world["summary"]["matches"] == 8  # not the failed run's 9th
    assert world["leaderboard"]["n_matches"] == 8 and world["leaderboard"]["note"] == "1 failed run (1 match) left out"
    assert out["left_out"] == {"failed_runs": 1, "matches": 1, "note": "1 failed run (1 match) left out"}

    assert main(["report", "--data-dir", str(mixed_dir), "--all", "--resamples", "20"]) == 0
    text = capsys.readouterr().out
    world_text, c4_text = text.split("Connect Four, all runs", 1)
    assert "survival" in world_text and "survival" not in c4_text and "crafter" not in c4_text
    assert "optimal rate" in c4_text and "won or drew %" in c4_text
    assert "Connect Four: Bradley-Terry leaderboard over 6 matches" in c4_text
    assert "Note: 1 failed run (1 match) left out" in " ".join(text.split())


def test_a_report_of_failed_runs_only_says_so(mixed_dir, capsys):
    assert main(["report", "--data-dir", str(mixed_dir), "--batch", "bat_f"]) == 2
    assert "no archived matches for series bat_f" in capsys.readouterr().err
