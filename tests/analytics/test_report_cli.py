"""`studio report` through the real console entry point."""
import json

import pytest

from analytics.summary import series_summary
from api.cli import main


def test_report_json_is_the_series_summary_and_leaderboard(archive_dir, capsys):
    assert main(["report", "--data-dir", str(archive_dir), "--series", "bat_b", "--json", "--resamples", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"] == json.loads(json.dumps(series_summary(archive_dir, "bat_b")))
    assert out["leaderboard"]["n_matches"] == 12 and out["leaderboard"]["n_resamples"] == 50


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
    assert "Bradley-Terry leaderboard over 12 matches" in text


def test_report_over_runs_and_over_everything(archive_dir, capsys):
    runs = "run_bat_a_1,run_bat_a_2,run_bat_c_1"
    assert main(["report", "--data-dir", str(archive_dir), "--runs", runs, "--json", "--resamples", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["runs"] == 3 and out["summary"]["scenario_ids"] == ["base", "lush"]
    assert main(["report", "--data-dir", str(archive_dir), "--all", "--json", "--resamples", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["by"] == "model"
    assert out["summary"]["models"] == json.loads(json.dumps(series_summary(archive_dir, by="model")))["models"]


def test_report_errors_exit_2_with_a_message(archive_dir, tmp_path, capsys):
    assert main(["report", "--data-dir", str(archive_dir), "--series", "bat_zzz"]) == 2
    assert "no archived matches for series bat_zzz" in capsys.readouterr().err
    assert main(["report", "--data-dir", str(tmp_path / "absent"), "--all"]) == 2
    assert "no data dir" in capsys.readouterr().err
