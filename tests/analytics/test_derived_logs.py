"""Scripted matches kept as their inputs: the log derived on demand is the stored one, byte for byte.

Every match is played twice by the workers' own code (play_job, land_chunk / for_head, the archive's
compaction), once with `[archive] events = "stored"` and once "derived", over many seeds, rosters,
resources, season lengths and stops; the derived archive holds no event log, and the log it derives
equals the stored one (every numeric column by its bytes, the texts, the metadata)."""
from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest

from analytics.archive import derive
from analytics.archive import materialize as materialize_module
from analytics.archive.cache import DerivedCache
from analytics.archive.format import event_columns, from_ipc, table_meta, to_ipc
from analytics.archive.materialize import engine_changed, pending
from analytics.archive.store import Archive
from analytics.data import open_data_dir
from api.cli import main
from engine import events
from engine.rules import POLICIES
from engine.scenario import resolve_env
from orchestrator.play import Job, play_job
from orchestrator.play.job import for_head, land_chunk

KEY = "bat_d"


def _seats(k: int) -> list[dict]:
    n = 1 + k % 4
    return [{"name": f"s{i}", "model": f"local/{POLICIES[(k + i) % len(POLICIES)]}", "provider": "local"}
            for i in range(n)]


def _job(k: int, keep_log: bool, archive: str) -> Job:
    env = resolve_env({"resources": {"food": {"max": 1 + k % 3, "regen": 1}}} if k % 5 == 0 else {})
    env.update(seed=1000 + 7 * k, spawn_seed=k, anchors=[["random", "greedy-harvester"][k % 2]])
    return Job(run_id=f"run{k}", match_id=f"m{k:03d}", data_dir="", season_ticks=30 + 11 * (k % 4), env=env,
               seats=_seats(k), meta={"scenario_id": "custom-base-v1", "scenario_hash": "h", "config_hash": "c",
                                      "batch_id": KEY, "node_id": "n"},
               archive=archive, keep_log=keep_log)


def _play(k: int, job: Job):
    # every seventh match is cancelled part-way, as a cancel stops a scripted worker; paced (a tick at a
    # time, as config [runs] min_tick_ms plays) so the cancel lands mid-season
    stop_at = 9 + k % 13 if k % 7 == 3 else None
    job.tick_ms = 0.001 if stop_at else 0.0
    ticks = []
    return job, play_job(job, should_stop=lambda: stop_at is not None and ticks and ticks[-1] >= stop_at,
                         on_tick=ticks.append, pack=False)


def _archive(root, keep_log: bool, seeds) -> Archive:
    """Half the matches land in one worker chunk (a staged part, then published), the other half are
    handed back and landed alone by the head (Arrow IPC), then compacted: both paths a series takes."""
    store = Archive(str(root))
    played = [_play(k, _job(k, keep_log, str(root))) for k in seeds]
    chunk, alone = played[::2], played[1::2]
    land_chunk(chunk)
    for job, o in alone:
        row = for_head(o, job, land=False)
        store.land(row.match_id, row.events, row.seats)
    store.compact(KEY, [j.match_id for j, _ in played])
    return store


SEEDS = range(48)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    root = tmp_path_factory.mktemp("derived")
    # data dirs, as a notebook (analytics.data) and the CLI open them
    return (_archive(root / "stored" / "archive", True, SEEDS), _archive(root / "derived" / "archive", False, SEEDS),
            root)


def test_derived_logs_equal_stored_logs_byte_for_byte(archives):
    stored, derived, root = archives
    assert not list((root / "derived" / "archive" / "events").rglob("*.*")), "a derived archive writes no event log"
    cancelled = 0
    for k in SEEDS:
        m = f"m{k:03d}"
        want, got = stored.events(m, KEY), derived.events(m, KEY)
        assert stored.derived(m, KEY) is None and derived.derived(m, KEY) is not None
        assert got.equals(want, check_metadata=True), m
        assert events.equal(event_columns(got), event_columns(want)), m  # numeric columns by their bytes
        assert table_meta(got) == table_meta(want)
        cancelled += derived.derived(m, KEY)["stop"][1] == "cancelled"
    assert cancelled >= 5
    # the seat rows (results) are the same in both archives
    ids = {f"m{k:03d}": KEY for k in SEEDS}
    assert derived.seats(ids).sort_by("match_id").equals(stored.seats(ids).sort_by("match_id"))


def test_a_derived_archive_is_smaller(archives):
    _, _, root = archives

    def size(d):
        return sum(p.stat().st_size for p in (root / d).rglob("*") if p.is_file())
    assert size("derived") < size("stored") * 0.75  # short seasons: the seat rows weigh most here


def _record(store: Archive, m: str) -> dict:
    return store.derived(m, KEY)


def test_a_changed_engine_is_named_and_no_log_is_served(archives, monkeypatch):
    _, derived, _ = archives
    rec = _record(derived, "m001")
    monkeypatch.setattr(derive, "engine_digest", lambda: "another-engine")
    with pytest.raises(derive.DerivedLogError) as e:
        derived.events("m001", KEY)
    assert e.value.cause == derive.ENGINE_CHANGED
    assert rec["engine"] in e.value.message and "another-engine" in e.value.message
    assert derive.UPGRADE_COMMAND in e.value.message and "results stand" in e.value.message


@pytest.mark.parametrize("field, cause", [("state", derive.STATE_DIFFERS), ("scores", derive.SCORES_DIFFERS)])
def test_a_replay_that_ends_elsewhere_is_refused_naming_why(archives, field, cause):
    _, derived, _ = archives
    rec = json.loads(json.dumps(_record(derived, "m002")))
    rec[field] = "0" * 32
    with pytest.raises(derive.DerivedLogError) as e:
        derive.regenerate("m002", rec)
    assert e.value.cause == cause and "digest differs" in e.value.message


def test_inputs_that_decide_another_match_fail_verification(archives):
    _, derived, _ = archives
    rec = json.loads(json.dumps(_record(derived, "m004")))
    rec["meta"]["seed"] += 1  # tampered inputs: another map, another match
    with pytest.raises(derive.DerivedLogError) as e:
        derive.regenerate("m004", rec)
    assert e.value.cause == derive.STATE_DIFFERS


def test_the_cache_plays_a_match_once_and_keeps_within_its_bound(archives, tmp_path, monkeypatch):
    _, derived, root = archives
    biggest = max(len(to_ipc(derived.events(f"m{k:03d}", KEY), compress=False)) for k in range(12))
    bound = int(biggest * 2.5)
    store = Archive(str(root / "derived" / "archive"), cache=DerivedCache(tmp_path / "cache", bound))
    plays = []
    real = derive.regenerate
    monkeypatch.setattr(derive, "regenerate", lambda m, r: plays.append(m) or real(m, r))
    first = store.events("m000", KEY)
    again = store.events("m000", KEY)
    assert plays == ["m000"] and again.equals(first, check_metadata=True)
    for k in range(1, 12):
        store.events(f"m{k:03d}", KEY)
        assert store.cache.size() <= bound
    assert len(store.cache.files()) >= 2
    assert from_ipc(store.cache._file("m011").read_bytes()).equals(derived.events("m011", KEY))


def _copy(root, tmp_path):
    shutil.copytree(root / "derived", tmp_path / "data")
    return tmp_path / "data"


def _events(data_dir) -> pa.Table:
    with open_data_dir(data_dir) as data:
        return data.query_arrow("SELECT * FROM events WHERE match_id IN (SELECT match_id FROM seats WHERE "
                                "batch_id = ?) ORDER BY ALL", [KEY])


def test_a_query_over_a_series_events_materializes_its_logs_first(archives, tmp_path):
    _, _, root = archives
    data_dir = _copy(root, tmp_path)
    seen = []
    with open_data_dir(data_dir, progress=lambda done, total: seen.append((done, total))) as data:
        one = data.events_arrow("m005")  # one match: derived through the cache, nothing written
        assert not list((data_dir / "archive" / "events").rglob("*.parquet"))
        got = data.query_arrow("SELECT count(*) AS n FROM events WHERE match_id = ?", ["m005"])
    assert got.column("n").to_pylist() == [one.num_rows] and seen[-1] == (len(SEEDS), len(SEEDS))
    assert pending(Archive(str(data_dir / "archive"))) == {}
    assert _events(data_dir).equals(_events(root / "stored"))


def test_studio_archive_materialize_writes_every_derived_log(archives, tmp_path, capsys):
    _, _, root = archives
    data_dir = _copy(root, tmp_path)
    assert main(["archive", "materialize", "--batch", "nothing-here", "--data-dir", str(data_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 0
    assert main(["archive", "materialize", "--all", "--data-dir", str(data_dir)]) == 0
    said = capsys.readouterr()
    out = json.loads(said.out)  # stdout: the JSON alone; progress goes to stderr
    assert f"materialize: {len(SEEDS)}/{len(SEEDS)} matches" in said.err.splitlines()
    assert out == {"matches": len(SEEDS), "written": len(SEEDS), "failed": {}, "series": [KEY], "damaged": {}}
    stored, written = Archive(str(root / "stored" / "archive")), Archive(str(data_dir / "archive"))
    for k in SEEDS:
        m = f"m{k:03d}"
        assert written.stored_events(m, KEY).equals(stored.events(m, KEY), check_metadata=True)
    assert main(["archive", "materialize", "--all", "--data-dir", str(data_dir)]) == 0  # nothing left: a no-op
    assert json.loads(capsys.readouterr().out)["matches"] == 0


def test_materialize_names_what_another_engine_recorded(archives, tmp_path, monkeypatch, capsys):
    _, _, root = archives
    data_dir = _copy(root, tmp_path)
    monkeypatch.setattr(derive, "engine_digest", lambda: "another-engine")
    assert engine_changed(Archive(str(data_dir / "archive"))) == {KEY: len(SEEDS)}
    assert main(["archive", "materialize", "--batch", KEY, "--data-dir", str(data_dir)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["written"] == 0 and len(out["failed"]) == len(SEEDS)
    assert all("another-engine" in why for why in out["failed"].values())


def test_a_large_series_is_materialized_in_parallel_with_progress(archives, tmp_path, monkeypatch):
    _, _, root = archives
    data_dir = _copy(root, tmp_path)
    monkeypatch.setattr(materialize_module, "CHUNK", 8)
    monkeypatch.setattr(materialize_module, "PARALLEL_FROM", 16)
    seen = []
    out = materialize_module.materialize(Archive(str(data_dir / "archive")), [KEY], workers=2,
                                         progress=lambda done, total: seen.append((done, total)))
    assert out["written"] == len(SEEDS) and not out["failed"]
    assert seen == [(8 * k, len(SEEDS)) for k in range(1, len(SEEDS) // 8 + 1)]
    parts = sorted((data_dir / "archive" / "events" / KEY).glob("derived-*.parquet"))
    assert len(parts) == len(SEEDS) // 8
    assert _events(data_dir).equals(_events(root / "stored"))
