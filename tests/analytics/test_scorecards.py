"""Scorecards recomputed from events equal what engine.rubric.score stored, for every match."""
import numpy as np
import pandas as pd
import pytest

from analytics.archive import format as archive
from analytics.archive.store import Archive
from analytics.data import open_data_dir
from orchestrator.sample import local_seats
from analytics.scorecards import _tally_files, achievement_names, recompute_scorecards
from engine.kernels.codes import FINAL
from engine.scenario import resolve_env
from orchestrator.play import Job, play_job
from tests.analytics.conftest import direct_seats

COMPARED = ("rank", "fitness_index", "grade", "archetype", "status", "crafter_score", "survival", "economy",
            "social", "competitiveness", "exploration", "net_worth", "ticks_alive", "trades", "partners",
            "raids_won", "raids_lost", "raids_repelled", "relics", "tiles_seen", "refused", "field_size",
            "match_ticks")


def assert_same_as_stored(cards: pd.DataFrame, stored: pd.DataFrame) -> None:
    joined = stored.merge(cards, on=["match_id", "seat"], how="outer", suffixes=("", "_re"), indicator=True)
    assert (joined["_merge"] == "both").all()
    for col in COMPARED:
        assert joined[col].tolist() == joined[f"{col}_re"].tolist(), col  # exact, not approximately
    assert [list(a) for a in joined["achievements"]] == [achievement_names(m) for m in joined["achievement_mask"]]


def test_every_archived_scorecard_is_reproduced_exactly(archive_dir):
    cards = recompute_scorecards(open_data_dir(archive_dir))
    stored = direct_seats(archive_dir)
    assert len(cards) == len(stored)
    assert_same_as_stored(cards, stored)


def test_long_seasons_cancelled_matches_and_starvation_are_reproduced(tmp_path):
    seats = local_seats(["honest-trader", "aggressive-raider", "random", "greedy-harvester"])
    scarce = resolve_env({"resources": {"food": {"max": 0.3, "regen": 0.2}}})
    calls = iter(range(10_000))
    jobs = [
        (Job("r_full", "m_full", str(tmp_path), 300, dict(resolve_env({}), seed=5, spawn_seed=6), seats), None),
        (Job("r_scarce", "m_scarce", str(tmp_path), 300, dict(scarce, seed=7, spawn_seed=8), seats), None),
        # stops after two stretches of ticks: a short log with match_ticks below the season
        (Job("r_cancel", "m_cancel", str(tmp_path), 300, dict(resolve_env({}), seed=9, spawn_seed=1), seats),
         lambda: next(calls) >= 2),
    ]
    store = Archive.of(tmp_path)
    for job, stop in jobs:
        o = play_job(job, should_stop=stop) if stop else play_job(job)
        store.land(o.match_id, o.events, o.seats)
    store.compact("bat_mixed", [job.match_id for job, _ in jobs])
    stored = direct_seats(tmp_path)
    assert "starved" in set(stored["status"]) and 0 < stored["match_ticks"].min() < 300
    assert_same_as_stored(recompute_scorecards(tmp_path), stored)


def test_scorecards_come_from_the_events_not_the_stored_rows(tmp_path):
    job = Job("r", "m_tampered", str(tmp_path), 60, dict(resolve_env({}), seed=3, spawn_seed=4),
              local_seats(["honest-trader", "random"]))
    o = play_job(job)
    table = archive.from_ipc(o.events)
    cols, meta = archive.event_columns(table), archive.table_meta(table)
    final = np.flatnonzero((cols["kind"] == FINAL) & (cols["agent"] == 1))[0]  # seat 1's final row
    cols["v"] = cols["v"].copy()
    cols["v"][final] += 1000.0  # its net worth
    store = Archive.of(tmp_path)
    store.land("m_tampered", archive.to_ipc(archive.events_table("m_tampered", cols, meta)), o.seats)
    store.compact("m_tampered", ["m_tampered"])
    cards = recompute_scorecards(tmp_path).set_index("seat")
    stored = direct_seats(tmp_path).set_index("seat")
    assert cards.loc[1, "net_worth"] == pytest.approx(stored.loc[1, "net_worth"] + 1000.0)
    assert cards.loc[1, "economy"] == 100.0 and cards.loc[0, "economy"] < stored.loc[0, "economy"]


def test_only_the_requested_matches_are_recomputed(archive_dir):
    wanted = ["match_bat_b_4", "match_bat_a_0", "no_such_match"]
    cards = recompute_scorecards(archive_dir, match_ids=wanted)
    assert sorted(set(cards["match_id"])) == ["match_bat_a_0", "match_bat_b_4"]
    assert list(cards["seat"]) == [0, 1, 2, 3, 0, 1, 2, 3]


def test_an_empty_data_dir_gives_an_empty_table(tmp_path):
    cards = recompute_scorecards(tmp_path)
    assert cards.empty and {"match_id", "seat", "fitness_index", "rank"} <= set(cards.columns)


def test_logs_split_across_stream_batches_are_reassembled(archive_dir):
    paths = open_data_dir(archive_dir).events_files()
    whole = _tally_files(paths)
    split = _tally_files(paths, batch_rows=333)  # every log spans several batches
    for got, want in zip(split, whole):
        assert np.array_equal(got, want)
