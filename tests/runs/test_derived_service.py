"""The service keeps scripted matches as their inputs (config.toml `[archive] events`, default
"derived"): their event logs are not written; the pages read logs derived on demand, verified, once
(the cache); an engine that cannot replay them is named at start and on their pages, and their
results stand. `events = "stored"` writes every log as before."""
from __future__ import annotations

import logging
import shutil

import httpx
import pytest

from analytics.archive import derive, materialize
from analytics.archive.store import Archive
from orchestrator.core import Core
from orchestrator.plans import ConfigError
from tests.runs.conftest import CONFIG, account, local_body, start, wait_terminal


@pytest.fixture(scope="module")
def played(srv):
    with srv.client(account(srv.core)) as c:
        single = c.post("/api/v1/runs", json=local_body(season_ticks=40)).json()["run"]
        batch_id = c.post("/api/v1/runs", json=local_body(season_ticks=40, trials=3)).json()["batch"]["batch_id"]
        trials = [r["id"] for r in srv.core.store.all("SELECT id FROM runs WHERE batch_id = ?", (batch_id,))]
        runs = [wait_terminal(c, r, timeout=300)["run"] for r in [single["run_id"]] + trials]
    assert all(r["status"] == "finished" for r in runs)
    return runs


def test_scripted_matches_archive_their_inputs_and_no_log(played, srv):
    archive = Archive.of(srv.data_dir, srv.core.config)
    for run in played:
        key = run.get("batch_id") or run["match_id"]
        assert archive.stored_events(run["match_id"], key) is None
        rec = archive.derived(run["match_id"], key)
        assert rec["engine"] == derive.engine_digest() and rec["stop"] == [40, "season_end"]
        assert rec["meta"]["seed"] == run["effective"]["seed"]
        assert archive.seats({run["match_id"]: key}).num_rows >= 2  # the results, as ever
    events = srv.data_dir / "archive" / "events"
    assert not [p for run in played for p in events.rglob("*") if run["match_id"] in p.name]


def test_pages_read_the_derived_log_and_a_second_read_plays_nothing(played, srv, monkeypatch):
    run = played[1]
    plays = []
    real = derive.regenerate
    monkeypatch.setattr(derive, "regenerate", lambda m, r: plays.append(m) or real(m, r))
    with httpx.Client(base_url=srv.url, timeout=60) as anon:
        first = anon.get(run["links"]["log"])
        again = anon.get(run["links"]["log"])
        frames = anon.get(run["links"]["replay"], params={"format": "json"})
    assert first.status_code == again.status_code == frames.status_code == 200
    assert first.text == again.text and "# field: " in first.text
    assert frames.json()["season_ticks"] == 40 and frames.json()["frames"]
    assert plays == [run["match_id"]]  # cached: the page read three times played its match once


def test_an_engine_that_cannot_replay_a_match_is_named_on_its_pages(played, srv, monkeypatch):
    run = played[2]
    recorded = Archive.of(srv.data_dir, srv.core.config).derived(run["match_id"], run["batch_id"])["engine"]
    monkeypatch.setattr(derive, "engine_digest", lambda: "0123456789abcdef0000")
    with httpx.Client(base_url=srv.url, timeout=60) as anon:
        log = anon.get(run["links"]["log"])
        frames = anon.get(run["links"]["replay"], params={"format": "json"})
        report = anon.get(run["links"]["match"])
    for r in (log, frames):
        assert r.status_code == 410 and r.json()["error"] == "log_not_kept"
        message = r.json()["message"]
        assert recorded in message and "0123456789abcdef0000" in message and "results stand" in message
    assert report.status_code == 200 and report.json()["results"]["agents"]  # its results stand


def test_the_server_says_at_start_how_many_matches_another_engine_recorded(played, srv, tmp_path, monkeypatch,
                                                                            caplog):
    data = tmp_path / "data"
    shutil.copytree(srv.data_dir / "archive", data / "archive")
    monkeypatch.setattr(derive, "engine_digest", lambda: "0123456789abcdef0000")
    with caplog.at_level(logging.WARNING, logger="studio.dispatcher"):
        other = start(data)
        other.stop()
    notes = [r.getMessage() for r in caplog.records if "another engine" in r.getMessage()]
    assert len(notes) == 1 and "studio archive materialize --all" in notes[0]
    # the series and single runs holding scripted matches kept as inputs (the shared server's archive
    # holds other tests' model runs and stored logs too)
    n = len(materialize.pending(Archive(str(data / "archive"))))
    assert n >= 2 and f"in {n} series" in notes[0]


def test_stored_mode_writes_every_log(tmp_path):
    s = start(tmp_path / "data", CONFIG + '\n[archive]\nevents = "stored"\n')
    try:
        with s.client(account(s.core)) as c:
            run = wait_terminal(c, c.post("/api/v1/runs", json=local_body(season_ticks=30)).json()["run"]["run_id"],
                                timeout=300)["run"]
    finally:
        s.stop()
    archive = Archive.of(s.data_dir, s.core.config)
    assert archive.stored_events(run["match_id"]) is not None and archive.derived(run["match_id"]) is None


def test_a_fork_of_a_scripted_match_plays_from_its_derived_log_and_is_refused_under_another_engine(srv, monkeypatch):
    with srv.client(account(srv.core)) as c:
        launched = [c.post("/api/v1/runs", json=local_body(season_ticks=40)).json()["run"]["run_id"] for _ in range(2)]
        run, unforked = [wait_terminal(c, r, timeout=300)["run"] for r in launched]
        fork = c.post("/api/v1/runs", json={"fork": {"run_id": run["run_id"], "tick": 17}})
        assert fork.status_code == 201, fork.text
        played = wait_terminal(c, fork.json()["run"]["run_id"], timeout=300)
        assert played["run"]["status"] == "finished" and played["results"]["fork"]["tick"] == 17
        # a fork keeps its own log: its start is another match's log
        archive = Archive.of(srv.data_dir, srv.core.config)
        assert archive.stored_events(played["run"]["match_id"]) is not None
        monkeypatch.setattr(derive, "engine_digest", lambda: "0123456789abcdef0000")
        other = c.post("/api/v1/runs", json={"fork": {"run_id": unforked["run_id"], "tick": 20}})
    assert other.status_code == 400 and other.json()["error"] == "bad_fork"
    assert "not kept" in other.json()["message"] and "0123456789abcdef0000" in other.json()["message"]


@pytest.mark.parametrize("setting, named", [('events = "kept"', "events"),
                                            ('derived_cache_mb = "lots"', "derived_cache_mb"),
                                            ("derived_cache_mb = -1", "derived_cache_mb")])
def test_a_bad_archive_setting_stops_the_start_naming_it(tmp_path, setting, named):
    (tmp_path / "config.toml").write_text(f"[archive]\n{setting}\n")
    with pytest.raises(ConfigError, match=f"\\[archive\\] {named}"):
        Core.open(tmp_path)
