"""The data layer: views over real archive files, bound parameters, no locks, live directories."""
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from analytics.archive.store import Archive
from analytics.data import EVENTS_COLUMNS, RUNS_COLUMNS, SEATS_COLUMNS, as_data, open_data_dir
from orchestrator.sample import local_seats, play_series
from engine.events import COLUMNS
from engine.kernels.codes import SNAPSHOT
from tests.analytics.conftest import SEEDS_A, SEEDS_B, direct_seats

ROOT = Path(__file__).resolve().parents[2]


def test_empty_data_dir_has_every_view_with_its_columns(tmp_path):
    data = open_data_dir(tmp_path / "nothing-here-yet")
    for view, columns in (("events", EVENTS_COLUMNS), ("seats", SEATS_COLUMNS), ("runs", RUNS_COLUMNS)):
        df = data.query(f"SELECT * FROM {view}")
        assert list(df.columns) == list(columns)
        assert df.empty
    assert data.seats_df(batch_id="bat_x").empty
    assert data.seats_arrow().num_rows == 0


def test_seat_view_holds_exactly_the_archived_rows(archive_dir):
    data = open_data_dir(archive_dir)
    got = data.seats_df().sort_values(["match_id", "seat"]).reset_index(drop=True)
    want = direct_seats(archive_dir).sort_values(["match_id", "seat"]).reset_index(drop=True)
    assert len(got) == len(want) == (len(SEEDS_A) + len(SEEDS_B) + 10) * 4
    for col in want.columns:
        if col == "achievements":
            assert [list(x) for x in got[col]] == [list(x) for x in want[col]]
        elif col != "scaffold":
            assert got[col].tolist() == want[col].tolist(), col


def test_filters_select_by_series_runs_and_scenario(archive_dir):
    data = open_data_dir(archive_dir)
    assert set(data.seats_df(batch_id="bat_b")["seed"]) == set(SEEDS_B)
    assert set(data.seats_df(batch_id=["bat_a", "bat_c"])["batch_id"]) == {"bat_a", "bat_c"}
    runs = ["run_bat_a_3", "run_bat_b_4"]
    assert sorted(set(data.seats_df(run_ids=runs)["run_id"])) == runs
    assert set(data.seats_df(scenario_id="lush")["batch_id"]) == {"bat_c"}
    assert not data.seats_df(batch_id="bat_a", anchors=False)["anchor"].any()
    assert len(data.runs_df(batch_id="bat_b")) == len(SEEDS_B)


def test_values_are_bound_never_spliced_into_sql(archive_dir):
    data = open_data_dir(archive_dir)
    assert data.seats_df(batch_id="bat_a' OR '1'='1").empty
    assert data.seats_df(run_ids=["x') OR true --"]).empty
    got = data.query("SELECT count(*) AS n FROM seats WHERE batch_id = ? AND seed = ?", ["bat_a", 3])
    assert got["n"][0] == 4


def test_pandas_and_arrow_results_agree(archive_dir):
    data = open_data_dir(archive_dir)
    arrow = data.seats_arrow(batch_id="bat_b")
    assert isinstance(arrow, pa.Table)
    frame = data.seats_df(batch_id="bat_b")
    assert arrow.column_names == list(frame.columns)
    # scaffold is all null here, and pandas spells a null string differently per path (None, NaN).
    assert arrow.column("scaffold").null_count == len(frame) and frame["scaffold"].isna().all()
    pd.testing.assert_frame_equal(arrow.to_pandas().drop(columns="scaffold"), frame.drop(columns="scaffold"),
                                  check_dtype=False)
    sql = "SELECT seed, avg(fitness_index) AS f FROM seats WHERE batch_id = $b GROUP BY seed ORDER BY seed"
    assert data.query_arrow(sql, {"b": "bat_a"}).column("f").to_pylist() == data.query(sql, {"b": "bat_a"})["f"].tolist()


def test_events_of_one_match_come_back_in_log_order(archive_dir):
    data = open_data_dir(archive_dir)
    cols, _ = Archive.of(archive_dir).read_events("match_bat_a_5", "bat_a")
    got = data.events_df("match_bat_a_5")
    for name in COLUMNS:
        assert np.array_equal(got[name].to_numpy(), cols[name]), name
    snaps = data.events_df("match_bat_a_5", kinds=["snapshot"])
    assert set(snaps["event"]) == {"snapshot"} and len(snaps) == int((cols["kind"] == SNAPSHOT).sum())


def test_service_connection_is_used_as_given(archive_dir):
    con = duckdb.connect()
    glob = str(archive_dir / "archive" / "seats" / "*.parquet")
    con.execute("CREATE TABLE seats AS SELECT * FROM read_parquet(?)", [glob])
    source = as_data(con)
    assert source.con is con and source.path is None
    assert len(source.query("SELECT * FROM seats WHERE batch_id = ?", ["bat_b"])) == len(SEEDS_B) * 4


def test_opening_and_querying_leaves_the_data_dir_untouched(archive_dir):
    def listing():
        return {p: p.stat().st_mtime_ns for p in archive_dir.rglob("*")}

    before = listing()
    data = open_data_dir(archive_dir)
    for view in ("events", "seats", "runs"):
        data.query(f"SELECT count(*) FROM {view}")
    data.close()
    assert listing() == before  # nothing written, no lock or WAL file created


WRITER = textwrap.dedent("""
    import sys
    from orchestrator.sample import local_seats, play_series
    play_series(sys.argv[1], "live", local_seats(["random", "honest-trader"]), range(int(sys.argv[2])),
                season_ticks=40, anchors=[])
""")


def test_reading_while_another_process_keeps_archiving(tmp_path):
    data = open_data_dir(tmp_path)  # opened before the first file exists
    total = 25
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(total)], cwd=ROOT)
    seen = []
    try:
        while writer.poll() is None:
            n_seats = int(data.query("SELECT count(*) AS n FROM seats")["n"][0])
            n_events = int(data.query("SELECT count(DISTINCT match_id) AS n FROM events")["n"][0])
            seen.append((n_seats, n_events))
            time.sleep(0.02)
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0
    final = data.seats_df(batch_id="live")
    assert len(final) == 2 * total
    assert [s for s, _ in seen] == sorted(s for s, _ in seen)  # the count only grows: no torn reads
    assert len(seen) > 1


def test_views_pick_up_new_series_without_reopening(tmp_path):
    data = open_data_dir(tmp_path)
    assert data.seats_df().empty
    play_series(tmp_path, "late", local_seats(["random"]), [1, 2], season_ticks=20, anchors=[])
    assert len(data.seats_df(batch_id="late")) == 2
    assert data.runs_df()["status"].tolist() == ["finished", "finished"]
