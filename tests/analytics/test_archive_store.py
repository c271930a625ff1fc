"""The archive away from the data dir: land, read, compact and read again on a filesystem that is
not the local disk (fsspec's in-memory one), and on a local path named by STUDIO_ARCHIVE_URI."""
from __future__ import annotations

import pyarrow.parquet as pq

from analytics.archive import format as archive, layout
from analytics.archive.store import Archive, archive_uri
from engine.scenario import resolve_env
from orchestrator.play import Job, play_job
from orchestrator.sample import local_seats

SEATS = local_seats(["honest-trader", "random"])


def played(match_id: str, seed: int, batch_id: str = "bat_x"):
    env = dict(resolve_env({}), seed=seed, spawn_seed=seed + 1)
    return play_job(Job(f"run_{match_id}", match_id, "", 40, env, SEATS, {"batch_id": batch_id}))


def test_an_object_store_archive_lands_compacts_and_reads_back(tmp_path):
    store = Archive.of(tmp_path, {"archive": {"uri": "memory://studio-test/archive"}})
    assert store.local_root is None
    outcomes = [played(f"m{k}", seed=k) for k in range(3)]
    for o in outcomes:
        store.land(o.match_id, o.events, o.seats)
    assert store.landed() == ["m0", "m1", "m2"]
    landed_cols, _ = store.read_events("m1")
    store.compact("bat_x", ["m0", "m1", "m2"])
    assert store.landed() == []
    cols, meta = store.read_events("m1", "bat_x")
    assert meta["run_id"] == "run_m1" and len(cols["tick"]) == len(landed_cols["tick"])
    assert all((cols[c] == landed_cols[c]).all() for c in ("tick", "agent", "kind", "v"))
    seats = store.seats({"m0": "bat_x", "m2": "bat_x"})
    assert sorted(set(seats.column("match_id").to_pylist())) == ["m0", "m2"] and seats.num_rows == 2 * 6
    # one file per series, one row group per match, match_id statistics on
    with store.fs.open_input_file(store.path(layout.EVENTS_DIR, "bat_x.parquet")) as f:
        md = pq.ParquetFile(f).metadata
    assert md.num_row_groups == 3 and md.row_group(1).column(0).statistics.has_min_max
    assert not (tmp_path / "archive").exists()  # nothing in the data dir


def test_studio_archive_uri_moves_the_archive(tmp_path, monkeypatch):
    elsewhere = tmp_path / "shared" / "archive"
    monkeypatch.setenv("STUDIO_ARCHIVE_URI", str(elsewhere))
    assert archive_uri(tmp_path / "data") == str(elsewhere)
    store = Archive.of(tmp_path / "data")
    o = played("solo", seed=9, batch_id=None)
    store.land(o.match_id, o.events, o.seats)
    store.compact("solo", ["solo"])
    assert sorted(p.name for p in (elsewhere / "events").iterdir()) == ["solo.parquet"]
    assert store.read_events("solo")[1]["match_id"] == "solo"


def test_scores_from_memory_equal_scores_from_the_landed_log(tmp_path):
    from engine.rubric import score
    from orchestrator.play.world import specs_from_meta

    o = played("m_score", seed=4)
    table = archive.from_ipc(o.events)
    assert score(archive.event_columns(table, with_text=False), specs_from_meta(archive.table_meta(table))) \
        == o.results


def test_a_worker_on_the_heads_node_hands_back_its_log_uncompressed():
    env = dict(resolve_env({}), seed=5, spawn_seed=6)

    def hand_back(node_id: str) -> bytes:
        job = Job("run_n", "m_n", "", 40, env, SEATS, {"batch_id": None, "node_id": node_id}, head_node="node_a")
        return play_job(job).events

    here, away = hand_back("node_a"), hand_back("node_b")  # away: the bytes cross a network
    assert archive.from_ipc(here).equals(archive.from_ipc(away))
    assert len(here) > 2 * len(away)


def test_a_parts_footer_is_parsed_once_and_its_reads_are_those_of_a_fresh_parse(tmp_path, monkeypatch):
    """A playing series' summaries read its parts again as it grows: each distinct footer is parsed once
    per process, and what the reads give is what they gave with every footer parsed afresh."""
    from analytics.archive import store as archive_store
    from orchestrator.play.job import land_chunk

    jobs = [Job(f"run_p{k}", f"p{k}", "", 30, dict(resolve_env({}), seed=k, spawn_seed=k + 1), SEATS,
                {"batch_id": "bat_p"}, archive=str(tmp_path), keep_log=False) for k in range(4)]
    land_chunk([(j, play_job(j, pack=False)) for j in jobs[:2]])
    land_chunk([(j, play_job(j, pack=False)) for j in jobs[2:]])
    store, wanted = Archive(str(tmp_path)), {f"p{k}": "bat_p" for k in range(4)}
    archive_store._parsed.cache_clear()
    parsed = []
    real = archive_store.json.loads
    monkeypatch.setattr(archive_store.json, "loads", lambda raw, *a, **k: parsed.append(len(raw)) or real(raw, *a, **k))
    first = [store.seats({m: "bat_p"}) for m in wanted] + [store.seats(wanted)]
    assert len(parsed) == 2  # two parts, each footer parsed once over five reads
    again = [store.seats({m: "bat_p"}) for m in wanted] + [store.seats(wanted)]
    assert len(parsed) == 2 and all(a.equals(b) for a, b in zip(first, again))
    archive_store._parsed.cache_clear()
    fresh = [store.seats({m: "bat_p"}) for m in wanted] + [store.seats(wanted)]
    assert all(a.equals(b) for a, b in zip(first, fresh)) and first[-1].num_rows == 4 * 6
