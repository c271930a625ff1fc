"""Workers land their matches: a worker that reaches the archive writes the match's files there and
hands back the run's row with a manifest; one that cannot (its node is not the archive's, or the
archive refuses the write) hands the bytes back for the head. What a writer that died leaves behind
is never read as a match and is swept away."""
from __future__ import annotations

import json
import os
import time

import fsspec
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
import ray

from analytics.archive import layout
from analytics.archive.format import from_ipc
from analytics.archive.store import NODE, PROCESS, SHARED, Archive, archive_reach
from analytics.data import open_data_dir
from engine.scenario import resolve_env
from orchestrator.core import Core
from orchestrator.play import Job, play_job
from orchestrator.play.job import for_head, land_chunk
from orchestrator.runs.head.archiving import ORPHAN_AGE_S, Archiver
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
    assert lands.events is None and lands.seats is None
    manifest = lands.archived
    assert manifest["pid"] == pid and manifest["node_id"] == ray.get_runtime_context().get_node_id()
    # the chunk's matches of one series in one part per kind, staged under the series until it is published
    assert manifest["files"] == {"events/bat_l/am.staged": (shared / "events" / "bat_l" / "am.staged").stat().st_size,
                                 "seats/bat_l/am.staged": (shared / "seats" / "bat_l" / "am.staged").stat().st_size}
    # the run's columns, results and roster in the text the head's runs repository stores
    results, roster = json.loads(lands.results), json.loads(lands.roster)
    assert results["match_ticks"] == 20 and lands.turns_settled == 2 * 20
    assert [s["usage"]["agent_turns"] for s in roster] == [20, 20]
    # the files equal what in-process play packs for the same seeds, and read back as a match
    local = play_job(Job("a", "am", "", 20, _env(1), SEATS, {"scenario_id": "svc:custom-base-v1", "batch_id": "bat_l"}))
    assert results == local.results
    cols, meta = Archive(str(shared)).read_events("am", "bat_l")
    assert meta["run_id"] == "a" and len(cols["tick"])
    field = len(local.results["agents"]) + len(local.results.get("anchors", []))
    assert Archive(str(shared)).seats({"am": "bat_l"}).column("run_id").to_pylist() == ["a"] * field
    # a worker that cannot write hands the match back, for the head to land
    for o in (elsewhere, refused):
        assert o.archived is None and o.events and o.seats and o.status == "finished"
    assert sorted(p.name for p in (shared / "seats").iterdir()) == ["bat_l"]
    assert sorted(p.name for p in (shared / "seats" / "bat_l").iterdir()) == ["am.staged"]
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


def _chunk(archive_dir, batch_id, seeds: list[int]) -> list[dict]:
    """A scripted worker's call, in-process: its matches played, landed together, rows for the head."""
    played = []
    for k in seeds:
        j = Job(f"r{k}", f"m{k}", "", 20, _env(k), SEATS, {"scenario_id": "svc:custom-base-v1", "batch_id": batch_id},
                archive=str(archive_dir))
        played.append((j, play_job(j, pack=False)))
    landed = land_chunk(played)
    return [for_head(o, j, landed.get(o.run_id), land=o.run_id not in landed) for j, o in played]


def test_a_chunk_lands_as_one_part_readers_see_once_published_without_matches_no_run_names(tmp_path):
    root = tmp_path / "archive"
    rows = _chunk(root, "bat_p", [1, 2, 3])
    assert {r.archived["files"]["seats/bat_p/m1.staged"] for r in rows} == {
        (root / "seats" / "bat_p" / "m1.staged").stat().st_size}
    archive = Archive(str(root))
    # staged: read by match id (the pages, the series summary), not by the Parquet globs
    assert archive.seats({"m2": "bat_p"}).column("match_id").unique().to_pylist() == ["m2"]
    assert archive.events("m3", "bat_p").column("match_id").unique().to_pylist() == ["m3"]
    assert archive.landed() == ["m1", "m2", "m3"]
    with open_data_dir(tmp_path) as data:
        assert data.seats_df().empty
        # a notebook reads a playing series' match by its id, in the log's order, from the staged part
        staged = data.events_df("m2")
        assert staged["tick"].tolist() == archive.events("m2", "bat_p").column("tick").to_pylist()
        assert set(staged["match_id"]) == {"m2"}
    # m3's run was played again under another match id (its worker died before the head heard): the
    # published part leaves it out, and the globs see exactly the matches the runs name
    archive.compact("bat_p", ["m1", "m2"])
    assert sorted(p.name for p in (root / "seats" / "bat_p").iterdir()) == ["m1.parquet"]
    assert layout.series_archived(tmp_path, layout.SEATS_DIR, "bat_p")
    with open_data_dir(tmp_path) as data:
        assert sorted(data.seats_df()["match_id"].unique()) == ["m1", "m2"]
        assert len(data.events_df("m2")) == archive.events("m2", "bat_p").num_rows
        assert data.events_df("m3").empty
    assert archive.landed() == [] and archive.events("m3", "bat_p") is None


def test_a_publication_stopped_midway_is_finished_by_the_next(tmp_path):
    root = tmp_path / "archive"
    _chunk(root, "bat_q", [1, 2])
    archive = Archive(str(root))
    # killed after moving the events part, before the seat rows'
    (root / "events" / "bat_q" / "m1.staged").rename(root / "events" / "bat_q" / "m1.parquet")
    assert archive.landed() == ["m1", "m2"]
    archive.compact("bat_q", ["m1", "m2"])
    for sub in ("events", "seats"):
        assert sorted(p.name for p in (root / sub / "bat_q").iterdir()) == ["m1.parquet"]
    assert archive.seats({"m1": "bat_q", "m2": "bat_q"}).num_rows == 2 * 6
    assert pq.read_table(root / "events" / "bat_q" / "m1.parquet").num_rows == sum(
        archive.events(m, "bat_q").num_rows for m in ("m1", "m2"))


def test_a_staged_part_no_run_names_is_swept_once_old(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.toml").write_text(CONFIG)
    core = Core.open(tmp_path / "data")
    root = tmp_path / "data" / "archive"
    _chunk(root, None, [5])  # a single run's match, its run played again under another id
    assert Archive(str(root)).landed() == ["m5"]
    old = time.time() - ORPHAN_AGE_S - 60
    for sub in ("events", "seats"):
        os.utime(root / sub / "m5" / "m5.staged", (old, old))
    archiver = Archiver(core, Archive.of(core.data_dir, core.config))
    try:
        archiver.sweep()
        archiver.flush()
    finally:
        archiver.close()
    assert not list((root / "seats" / "m5").iterdir()) and not list((root / "events" / "m5").iterdir())
    assert Archive(str(root)).events("m5") is None


def test_a_part_rewritten_without_an_orphan_is_not_left_staged_when_the_rewrite_was_cut_short(tmp_path):
    root = tmp_path / "archive"
    _chunk(root, "bat_r", [1, 2])
    archive = Archive(str(root))
    staged = {sub: (root / sub / "bat_r" / "m1.staged").read_bytes() for sub in ("events", "seats")}
    archive.compact("bat_r", ["m1"])  # m2's run was played again: the part is written without it
    for sub, data in staged.items():  # as if killed after writing the new part, before dropping the staged one
        (root / sub / "bat_r" / "m1.staged").write_bytes(data)
    archive.compact("bat_r", ["m1"])
    assert layout.series_archived(tmp_path, layout.EVENTS_DIR, "bat_r")
    assert archive.seats({"m1": "bat_r", "m2": "bat_r"}).column("match_id").unique().to_pylist() == ["m1"]
    assert archive.events("m2", "bat_r") is None and archive.landed() == []


def test_a_part_whose_seat_rows_were_never_written_is_never_published(tmp_path):
    root = tmp_path / "archive"
    _chunk(root, "bat_h", [1])
    # the worker's write failed after the events part, before the seat rows: its match went back to the
    # head, which landed it alone
    (root / "seats" / "bat_h" / "m1.staged").unlink()
    o = play_job(Job("r1", "m1", "", 20, _env(1), SEATS, {"scenario_id": "svc:custom-base-v1", "batch_id": "bat_h"}))
    archive = Archive(str(root))
    archive.land(o.match_id, o.events, o.seats)
    archive.compact("bat_h", ["m1"])
    assert not list((root / "events" / "bat_h").iterdir())
    with open_data_dir(tmp_path) as data:
        assert len(data.events_df("m1")) == archive.events("m1", "bat_h").num_rows == from_ipc(o.events).num_rows


class _PublishedMeanwhile(pafs.FSSpecHandler):
    """The local disk, where another process (the compactor) publishes a series' staged parts at the worst
    moment for a reader: just after the reader listed them, just after it first opened one, or while it
    lists the series' directory, whose listing then shows neither name (POSIX lets a directory read miss
    a file renamed meanwhile)."""

    def __init__(self, root, key: str, ids: list[str], when: str):
        super().__init__(fsspec.filesystem("file"))
        self.compactor, self.key, self.ids, self.when, self.done = Archive(str(root)), key, ids, when, False

    def _publish(self) -> None:
        if not self.done:
            self.done = True
            self.compactor.compact(self.key, self.ids)

    def get_file_info_selector(self, selector):
        infos = super().get_file_info_selector(selector)
        if self.when == "listed" and any(i.path.endswith(".staged") for i in infos):
            self._publish()
        elif self.when == "missed" and any(i.path.endswith(".staged") for i in infos) and not self.done:
            self._publish()
            infos = [i for i in infos if not i.path.endswith(".staged")]
        return infos

    def open_input_file(self, path):
        f = super().open_input_file(path)
        if self.when == "opened" and path.endswith(".staged"):
            self._publish()
        return f


@pytest.mark.parametrize("when", ["listed", "opened", "missed"])
def test_a_reader_sees_every_match_of_a_part_published_while_it_reads(tmp_path, when):
    root = tmp_path / "archive"
    _chunk(root, "bat_m", [1, 2])
    whole = Archive(str(root))
    seat_rows, events = whole.seats({"m1": "bat_m", "m2": "bat_m"}).num_rows, whole.events("m2", "bat_m").num_rows
    reads = {
        "seats": lambda a: a.seats({"m1": "bat_m", "m2": "bat_m"}).num_rows == seat_rows,  # a series' summary
        "events": lambda a: a.events("m2", "bat_m").num_rows == events,  # a page of the log
        "landed": lambda a: a.landed() in (["m1", "m2"], []),  # the sweep: staged, or published since
    }
    for name, read in reads.items():
        _chunk(root, "bat_m", [1, 2])  # staged again: the same matches, as a worker wrote them
        for p in (root / "events" / "bat_m").glob("*.parquet"):
            p.unlink()
        for p in (root / "seats" / "bat_m").glob("*.parquet"):
            p.unlink()
        archive = Archive(str(root))
        meanwhile = _PublishedMeanwhile(root, "bat_m", ["m1", "m2"], when)
        archive.fs = pafs.PyFileSystem(meanwhile)
        assert read(archive), name
        assert meanwhile.done, name  # the race was run
