"""Workers land their matches: a worker that reaches the archive writes the match's files there and
hands back the run's row with a manifest; one that cannot (its node is not the archive's, or the
archive refuses the write) hands the bytes back for the head. What a writer that died leaves behind
is never read as a match and is swept away."""
from __future__ import annotations

import json
import os
import time

import pyarrow.parquet as pq
import ray

from analytics.archive import layout
from analytics.archive.store import NODE, PROCESS, SHARED, Archive, archive_reach
from engine.scenario import resolve_env
from orchestrator.core import Core
from orchestrator.play import Job, play_job
from orchestrator.runs.archiving import ORPHAN_AGE_S, Archiver
from orchestrator.workers import MatchWorker
from tests.runs.conftest import CONFIG

SEATS = [{"name": f"s{k}", "model": "local/random", "provider": "local"} for k in range(2)]


def _env(seed: int) -> dict:
    return dict(resolve_env({}), seed=seed, spawn_seed=seed + 1)


def _job(run_id: str, seed: int, **archive) -> dict:
    return vars(Job(run_id=run_id, match_id=run_id + "m", data_dir="", season_ticks=20, env=_env(seed), seats=SEATS,
                    meta={"scenario_id": "svc:custom-base-v1", "batch_id": "bat_l"}, **archive))


def test_a_worker_lands_its_match_and_hands_back_the_row_and_a_manifest(tmp_path):
    shared = tmp_path / "archive"
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the archive's directories should be")
    worker = MatchWorker.remote()
    try:
        pid = ray.get(worker.pid.remote(), timeout=120)
        lands, elsewhere, refused = ray.get(worker.play_many.remote([
            _job("a", 1, archive=str(shared)),                                 # shared: any node writes
            _job("b", 2, archive=str(shared), archive_node="some-other-node"),  # another node's disk
            _job("c", 3, archive=str(blocked / "archive")),                     # the archive refuses
        ]), timeout=120)
    finally:
        ray.kill(worker)
    # the lander's manifest: its files with their sizes, its node and process; no bytes come back
    assert lands["events"] is None and lands["seats"] is None
    manifest = json.loads(lands["archived"])
    assert manifest["pid"] == pid and manifest["node_id"] == ray.get_runtime_context().get_node_id()
    assert manifest["files"] == {"events/am.arrow": (shared / "events" / "am.arrow").stat().st_size,
                                 "seats/am.arrow": (shared / "seats" / "am.arrow").stat().st_size}
    # the row as the store keeps it, serialised by the worker: the head parses none of it
    assert json.loads(lands["results"])["match_ticks"] == 20 and lands["turns_settled"] == 2 * 20
    assert [s["usage"]["agent_turns"] for s in json.loads(lands["roster"])] == [20, 20]
    # the files equal what in-process play packs for the same seeds, and read back as a match
    local = play_job(Job("a", "am", "", 20, _env(1), SEATS, {"scenario_id": "svc:custom-base-v1", "batch_id": "bat_l"}))
    assert json.loads(lands["results"]) == local.results
    cols, meta = Archive(str(shared)).read_events("am")
    assert meta["run_id"] == "a" and len(cols["tick"])
    # a worker that cannot write hands the match back, for the head to land
    for o in (elsewhere, refused):
        assert o["archived"] is None and o["events"] and o["seats"] and o["status"] == "finished"
    assert sorted(p.name for p in (shared / "seats").iterdir()) == ["am.arrow"]
    assert not list(shared.rglob(f"*{layout.TEMP_SUFFIX}"))


def test_where_an_archive_can_be_written_from(tmp_path, monkeypatch):
    assert archive_reach(str(tmp_path)) == NODE
    assert archive_reach(str(tmp_path), {"archive": {"shared": True}}) == SHARED
    assert archive_reach("s3://bucket/prefix") == SHARED and archive_reach("memory://x") == PROCESS
    monkeypatch.setenv("STUDIO_ARCHIVE_SHARED", "1")
    assert archive_reach(str(tmp_path)) == SHARED
    # a relative path is made absolute for the workers, whose working directory is not the service's
    monkeypatch.chdir(tmp_path)
    assert Archive("rel/archive").location == str(tmp_path / "rel" / "archive")


def test_what_a_dead_writer_left_is_never_read_and_the_sweep_removes_it(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.toml").write_text(CONFIG)
    core = Core.open(tmp_path / "data")
    archive = Archive.of(core.data_dir, core.config)
    seats = tmp_path / "data" / "archive" / "seats"
    o = play_job(Job("r", "orphan", "", 20, _env(4), SEATS, {"batch_id": None}))
    archive.land(o.match_id, o.events, o.seats)  # landed, but no run names it: its worker died before the head heard
    half = seats / f"half.arrow.0a1b2c3d{layout.TEMP_SUFFIX}"  # killed mid-write
    half.write_bytes(o.seats[: len(o.seats) // 2])
    fresh = seats / f"fresh.arrow.0a1b2c3e{layout.TEMP_SUFFIX}"  # a live writer's, about to be moved
    fresh.write_bytes(b"x")
    assert archive.landed() == ["orphan"]  # a temporary file is never a match
    old = time.time() - ORPHAN_AGE_S - 60
    for p in (half, seats / "orphan.arrow", tmp_path / "data" / "archive" / "events" / "orphan.arrow"):
        os.utime(p, (old, old))
    archiver = Archiver(core, archive)
    try:
        archiver.sweep()
        archiver.flush()
    finally:
        archiver.close()
    assert sorted(p.name for p in seats.iterdir()) == [fresh.name]
    assert archive.events("orphan") is None


def test_a_compaction_run_again_after_it_stopped_midway_duplicates_nothing(tmp_path):
    archive = Archive(str(tmp_path / "archive"))
    outcomes = [play_job(Job(f"r{k}", f"m{k}", "", 20, _env(k), SEATS, {"batch_id": "bat_c"})) for k in range(3)]
    for o in outcomes:
        archive.land(o.match_id, o.events, o.seats)
    archive.compact("bat_c", ["m0", "m1", "m2"])
    once = pq.read_table(tmp_path / "archive" / "events" / "bat_c.parquet").num_rows
    seat_rows = archive.seats({f"m{k}": "bat_c" for k in range(3)}).num_rows
    for o in outcomes:  # as if the compaction had been killed after writing, before dropping the landed files
        archive.land(o.match_id, o.events, o.seats)
    archive.compact("bat_c", ["m0", "m1", "m2"])
    assert pq.read_table(tmp_path / "archive" / "events" / "bat_c.parquet").num_rows == once
    assert archive.seats({f"m{k}": "bat_c" for k in range(3)}).num_rows == seat_rows
    assert archive.landed() == []
