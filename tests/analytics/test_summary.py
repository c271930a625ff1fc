"""Series summaries: every number checked against scipy/numpy on the same rows read without DuckDB."""
import json

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from scipy import stats as st

from analytics import choice, stats
from analytics.data import DIMENSIONS, open_data_dir
from orchestrator.sample import local_seats, play_series
from analytics.summary import series_summary
from engine import rubric
from tests.analytics.conftest import SEEDS_A, SEEDS_B, direct_seats


def seat_rows(root, batch_id, seat):
    rows = direct_seats(root)
    return rows[(rows["batch_id"] == batch_id) & (rows["seat"] == seat)].sort_values("match_id")


def rounded(interval, digits=2):
    return tuple(None if v is None else round(v, digits) for v in (interval.estimate, interval.low, interval.high))


def test_small_series_uses_the_chosen_bounded_interval_and_wilson_rates(archive_dir):
    summary = series_summary(archive_dir, "bat_b")
    assert summary["runs"] == summary["matches"] == len(SEEDS_B)
    assert summary["run_ids"] == sorted(direct_seats(archive_dir).query("batch_id == 'bat_b'")["run_id"].unique())
    assert [s["seat"] for s in summary["seats"]] == [0, 1, 2, 3]
    for entry in summary["seats"]:
        rows = seat_rows(archive_dir, "bat_b", entry["seat"])
        assert (entry["name"], entry["model"], entry["anchor"]) == tuple(rows.iloc[0][["name", "model", "anchor"]])
        x = rows["fitness_index"].to_numpy()
        got = entry["fitness_index"]
        assert got["method"] in (choice.METHOD_NAMES[choice.method_for("fitness_index", x.size)], "constant")
        assert got["n"] == x.size == len(SEEDS_B)
        assert got["estimate"] == round(x.mean(), 2)
        assert (got["estimate"], got["low"], got["high"]) == rounded(stats.bounded_interval(x, "fitness_index"))
        assert 0.0 <= got["low"] <= got["high"] <= 100.0
        wins, alive = int((rows["rank"] == 1).sum()), int((rows["status"] == "alive").sum())
        for key, k in (("win_rate", wins), ("survival_rate", alive)):
            ci = st.binomtest(k, x.size).proportion_ci(method="wilson")
            assert entry[key]["estimate"] == round(k / x.size, 4)
            assert (entry[key]["low"], entry[key]["high"]) == (round(ci.low, 4), round(ci.high, 4))


def test_from_30_runs_each_score_uses_its_chosen_method(archive_dir):
    summary = series_summary(archive_dir, "bat_a")
    entry = next(s for s in summary["seats"] if s["seat"] == 0)
    rows = seat_rows(archive_dir, "bat_a", 0)
    for name in ("fitness_index", *DIMENSIONS):
        x = rows[name].to_numpy()
        got = entry[name] if name == "fitness_index" else entry["dimensions"][name]
        assert got["n"] == len(SEEDS_A) >= 30
        method = choice.method_for(name, x.size)
        constant = np.ptp(x) == 0 and method != "betting"  # all equal: the zero-width interval
        assert got["method"] == ("constant" if constant else choice.METHOD_NAMES[method])
        assert (got["estimate"], got["low"], got["high"]) == rounded(stats.bounded_interval(x, name))
        assert 0.0 <= got["low"] <= got["high"] <= 100.0


def test_crafter_score_uses_series_success_rates(archive_dir):
    entry = series_summary(archive_dir, "bat_a")["seats"][1]
    rows = seat_rows(archive_dir, "bat_a", 1)
    rates = np.array([100.0 * np.mean([a in list(got) for got in rows["achievements"]])
                      for a in rubric.ACHIEVEMENTS])
    assert list(entry["achievement_rates"].values()) == np.round(rates, 2).tolist()
    assert entry["crafter_score"] == round(np.exp(np.mean(np.log(1 + rates))) - 1, 2)
    # the series score is not the mean of per-match scores (the geometric mean rewards breadth)
    assert entry["crafter_score"] != pytest.approx(rows["crafter_score"].mean(), abs=1e-6)


def test_dimensions_are_summarised_per_seat(archive_dir):
    entry = series_summary(archive_dir, "bat_b")["seats"][2]
    rows = seat_rows(archive_dir, "bat_b", 2)
    assert set(entry["dimensions"]) == set(DIMENSIONS)
    for d in DIMENSIONS:
        assert entry["dimensions"][d]["estimate"] == round(rows[d].mean(), 2)


def test_summary_is_strict_json_and_a_single_run_has_no_bounds(tmp_path):
    play_series(tmp_path, "one", local_seats(["honest-trader"]), [4], season_ticks=20, anchors=["random"])
    summary = series_summary(tmp_path, "one")
    text = json.dumps(summary, allow_nan=False)
    entry = json.loads(text)["seats"][0]
    assert entry["n"] == 1 and entry["fitness_index"]["low"] is None and entry["fitness_index"]["high"] is None


def test_a_duckdb_connection_with_a_seats_table_gives_the_same_summary(archive_dir):
    con = duckdb.connect()
    con.execute("CREATE TABLE seats AS SELECT * FROM read_parquet(?)",
                [str(archive_dir / "archive" / "seats" / "*.parquet")])
    assert series_summary(con, "bat_b") == series_summary(open_data_dir(archive_dir), "bat_b")


def test_unknown_series_is_an_empty_summary_not_an_error(archive_dir):
    summary = series_summary(archive_dir, "bat_none")
    assert summary["matches"] == 0 and summary["seats"] == []


def test_runs_of_different_rosters_summarise_per_model(archive_dir):
    summary = series_summary(archive_dir, run_ids=["run_bat_a_0", "run_bat_b_0"], by="model")
    by_model = {m["model"]: m["n"] for m in summary["models"]}
    assert by_model == {"local/honest-trader": 1, "local/greedy-harvester": 1, "local/aggressive-raider": 2,
                        "anchor/random": 2, "anchor/greedy-harvester": 2}
    with pytest.raises(ValueError):
        series_summary(archive_dir, by="colour")


def test_decision_accuracy_is_the_mean_of_graded_matches_with_its_t_interval(archive_dir):
    """A source with a `decisions` table (the service registers its graded seats): seat 0 graded in
    five matches of bat_b, seat 1 in none; seat 0's interval is Student t's on exactly those five."""
    rows = direct_seats(archive_dir)
    matches = sorted(rows[rows["batch_id"] == "bat_b"]["match_id"].unique())[:5]
    acc = np.array([61.5, 72.0, 55.25, 80.0, 67.75])
    con = duckdb.connect()
    con.register("seats", rows[rows["batch_id"] == "bat_b"])
    con.register("decisions", pd.DataFrame({"match_id": matches, "seat": [0] * 5, "accuracy": acc}))
    seats = {s["seat"]: s for s in series_summary(con, "bat_b")["seats"]}
    got = seats[0]["decision_accuracy"]
    lo, hi = st.t.interval(0.95, acc.size - 1, loc=acc.mean(), scale=st.sem(acc))
    assert got["n"] == 5 and got["estimate"] == round(acc.mean(), 2)
    assert (got["low"], got["high"]) == (round(lo, 2), round(hi, 2))
    assert seats[1]["decision_accuracy"] is None
    assert series_summary(archive_dir, "bat_b")["seats"][0]["decision_accuracy"] is None  # no decisions table


def test_the_services_summary_without_duckdb_is_the_duckdb_sources_as_the_series_grows(tmp_path):
    """summary_text.compute (rows from Arrow, those read before kept) against series_summary over the
    DuckDB source the service registered before, at every size of a growing series, with graded seats."""
    from analytics.archive.store import Archive
    from orchestrator.runs.series import summary_text

    play_series(tmp_path, "bat_g", local_seats(["honest-trader", "aggressive-raider"]), range(32), season_ticks=20,
                anchors=["random", "greedy-harvester"])
    archive = Archive.of(tmp_path)
    matches = sorted(direct_seats(tmp_path)["match_id"].unique(), key=lambda m: int(m.rsplit("_", 1)[1]))
    rng = np.random.default_rng(3)
    graded = pa.table({"match_id": pa.array([m for m in matches for _ in range(2)], pa.string()),
                       "seat": pa.array([0, 3] * len(matches), pa.int32()),
                       "accuracy": pa.array(np.round(rng.random(2 * len(matches)) * 100, 2))})
    summary_text._kept.clear()
    for n in (0, 1, 2, 3, 5, 9, 10, 20, 30, 31, 32):
        decisions = graded.filter(pc.is_in(graded["match_id"], pa.array(matches[:n], pa.string())))
        got = summary_text.compute(archive, "bat_g", matches[:n], decisions)
        want = series_summary(summary_text.source(archive, matches[:n], "bat_g", decisions), "bat_g")
        assert got.summary == want and json.loads(got.text) == json.loads(json.dumps(want)), n
        assert got.summary["matches"] == n
    summary_text._kept.clear()  # read afresh, and a smaller set than the rows kept: the same again
    assert summary_text.compute(archive, "bat_g", matches, graded).summary == got.summary
    assert summary_text.compute(archive, "bat_g", matches[:3], graded.slice(0, 6)).summary == series_summary(
        summary_text.source(archive, matches[:3], "bat_g", graded.slice(0, 6)), "bat_g")
    assert summary_text.nothing_scored("bat_g").summary == series_summary(
        summary_text.source(archive, [], "bat_g", graded.slice(0, 0)), "bat_g")
