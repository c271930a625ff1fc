"""Following a whole series through its batch read: the summary kept per change of its scored runs (the
same as a fresh one, never recomputed by a read that changed nothing, computed by a worker's task and
not by the server's process when it has a dispatcher), the `wait_ms` long-poll over REST and MCP, and
Studio.wait on a series (a summary seen while the series plays holds its bootstrap intervals as first
computed; the final one is the fresh one whole). Real servers playing runs on the session's Ray."""
from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from analytics.archive.layout import SEATS_DIR, series_archived, series_files
from analytics.summary import series_summary
from api.python import Studio
from orchestrator import auth
from orchestrator.runs.series import read as series, summaries, summarizer, summary_text
from tests.mcp.conftest import connect
from tests.runs.conftest import account, local_body
from tests.waiting import until


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _batch(c, batch_id: str, **params) -> dict:
    r = c.get(f"/api/v1/batches/{batch_id}", params=params)
    assert r.status_code == 200, r.text
    return r.json()["batch"]


def _fresh(core, batch_id: str, run_ids: list[str]) -> dict:
    """The summary computed now from the archive over these runs' matches, as the wire carries it."""
    marks = ",".join("?" * len(run_ids))
    matches = [r["match_id"] for r in core.store.all(f"SELECT match_id FROM runs WHERE id IN ({marks})", tuple(run_ids))]
    return json.loads(json.dumps(series_summary(summaries.summary_source(core, matches, batch_id), batch_id)))


RESAMPLED = ("percentile bootstrap", "BCa bootstrap", "bootstrap-t, cut to the scale")


def _held(summary: dict) -> dict:
    """A summary of a playing series with its bootstrap intervals left out: those are computed once per
    seat, metric and method while it plays and then held (their own n says which sample they cover)."""
    def keep(seat: dict, entry):
        return not (isinstance(entry, dict) and entry.get("method") in RESAMPLED and entry["n"] <= seat["n"])
    seats = [{k: v for k, v in seat.items() if keep(seat, v)}
             | {"dimensions": {d: v for d, v in seat["dimensions"].items() if keep(seat, v)}}
             for seat in summary["seats"]]
    return summary | {"seats": seats}


def _followed(c, batch_id: str) -> list[dict]:
    """Every state the long-poll answered, until no run of the series is left to play."""
    seen = [_batch(c, batch_id)]
    while seen[-1]["status"] in ("queued", "running"):
        seen.append(_batch(c, batch_id, wait_ms=10_000))
    return seen


def _counted(monkeypatch) -> list:
    """Every summary computed in this process (the server's, in-process) from now on."""
    computed = []
    real = summary_text.compute
    monkeypatch.setattr(summaries, "compute", lambda *a, **k: computed.append(a) or real(*a, **k))
    return computed


def _ended(core, batch_id: str) -> None:
    """Until no run of the series is left to play, read from the store: no batch read asks for a summary."""
    until(lambda: all(r["status"] in ("finished", "failed", "cancelled") for r in core.store.all(
        "SELECT status FROM runs WHERE batch_id = ?", (batch_id,))), 120, what="the series' end")


def test_a_followed_series_summaries_come_from_the_workers(paced, monkeypatch):
    srv = paced  # paced runs go one per worker call: they land one by one
    computed = _counted(monkeypatch)
    monkeypatch.setattr(summarizer, "PLAYING_EVERY_S", 0.1)  # a summary per landed run, or nearly
    token = account(srv.core)
    with srv.client(token) as c:
        batch_id = c.post("/api/v1/runs", json=local_body(trials=6, season_ticks=30)).json()["batch"]["batch_id"]
        seen = _followed(c, batch_id)
    assert computed == []  # no read computed one in the server's process, though the series changed under them
    assert seen[-1]["status"] == "finished" and seen[-1]["counts"] == {"finished": 6}
    assert len({b["summary"]["runs"] for b in seen}) >= 3  # the series was followed as its runs landed
    kept_at = srv.core.store.one("SELECT computed_at_ms FROM batch_summaries WHERE batch_id = ?", (batch_id,))
    for b in seen:
        summary = b["summary"]
        # while the series plays, the newest kept summary: of some of the runs that had ended, maybe not all
        assert summary["runs"] <= b["counts"].get("finished", 0) + b["counts"].get("cancelled", 0)
        if summary["runs"]:
            assert _held(summary) == _held(_fresh(srv.core, batch_id, summary["run_ids"]))
    assert seen[-1]["summary"]["runs"] == 6  # the final read waited for the summary of every run
    assert seen[-1]["summary"] == _fresh(srv.core, batch_id, seen[-1]["run_ids"])
    kept = srv.core.store.one("SELECT version, matches, summary, computed_at_ms FROM batch_summaries "
                              "WHERE batch_id = ?", (batch_id,))
    matches = [r["match_id"] for r in srv.core.store.all("SELECT match_id FROM runs WHERE batch_id = ?", (batch_id,))]
    assert kept["matches"] == 6 and kept["version"] == summaries.version(matches)
    assert json.loads(kept["summary"]) == seen[-1]["summary"] and kept["computed_at_ms"] == kept_at["computed_at_ms"]


def test_a_playing_series_is_summarised_again_only_once_its_runs_grew_by_half(paced, monkeypatch):
    """No pause between a series' summaries and none grown stale: its growth alone paces them. Each
    summary a follower sees while the series plays covers at least half as many runs again as the one
    before; the final one covers every run."""
    monkeypatch.setattr(summarizer, "PLAYING_EVERY_S", 0.0)
    monkeypatch.setattr(summarizer, "PLAYING_STALE_S", 600.0)
    token = account(paced.core)
    with paced.client(token) as c:
        body = local_body(trials=12, season_ticks=30, grading="off")
        batch_id = c.post("/api/v1/runs", json=body).json()["batch"]["batch_id"]
        seen = _followed(c, batch_id)
    assert seen[0]["summary"]["runs"] == 0 and seen[-1]["summary"]["runs"] == 12
    interim = sorted({b["summary"]["runs"] for b in seen[:-1]} - {0})
    assert len(interim) >= 2, seen  # the series was followed as its runs landed
    assert all(b >= 1.5 * a for a, b in zip(interim, interim[1:])), interim


def test_an_ended_series_summary_is_computed_here_when_its_task_fails(srv, monkeypatch, caplog):
    summarizer = srv.dispatcher.summaries
    monkeypatch.setattr(summarizer, "uri", "nosuch://archive")  # no worker can open it: every task fails
    computed = _counted(monkeypatch)
    token = account(srv.core)
    principal = auth.authenticate(srv.core, token)
    with srv.client(token) as c, caplog.at_level(logging.WARNING, logger="studio.summaries"):
        for read in ("rest", "thread"):
            out = c.post("/api/v1/runs", json=local_body(trials=2, season_ticks=30)).json()["batch"]
            _ended(srv.core, out["batch_id"])
            caplog.clear()
            if read == "rest":
                final = _batch(c, out["batch_id"], wait_ms=30_000)
            else:  # MCP's and Python's path, on the process that has the dispatcher
                final = series.get_series(srv.app.state.core, principal, out["batch_id"])["batch"]
                final = json.loads(json.dumps(final))
            assert final["status"] == "finished" and final["summary"]["runs"] == 2
            assert final["summary"] == _fresh(srv.core, out["batch_id"], out["run_ids"])
            assert any("task computing its summary failed" in r.getMessage() for r in caplog.records), read
            assert any("computing it here" in r.getMessage() for r in caplog.records), read
    assert len(computed) == 2  # once per series, by the read that found its task failed


def test_a_read_with_nothing_changed_computes_nothing(srv, monkeypatch):
    token = account(srv.core)
    with srv.client(token) as c:
        batch_id = c.post("/api/v1/runs", json=local_body(trials=3, season_ticks=30)).json()["batch"]["batch_id"]
        final = _followed(c, batch_id)[-1]
        computed = _counted(monkeypatch)
        summaries._memo.clear()  # as after a restart: the store's kept summary serves, nothing is computed
        for _ in range(200):
            assert _batch(c, batch_id) == final
        assert computed == []
    principal = auth.authenticate(srv.core, token)
    series.get_series(srv.core, principal, batch_id)
    t0 = time.process_time()
    for _ in range(200):
        series.get_series(srv.core, principal, batch_id)
    per_read_ms = (time.process_time() - t0) / 200 * 1000
    assert per_read_ms < 1.0, f"{per_read_ms:.3f} ms of CPU per read"
    assert computed == []


def test_the_long_poll_answers_at_w_or_as_soon_as_a_run_ends(paced):
    token = account(paced.core)
    with paced.client(token) as c:
        out = c.post("/api/v1/runs", json=local_body(trials=2, season_ticks=2000)).json()["batch"]
        batch_id, run_ids = out["batch_id"], out["run_ids"]
        until(lambda: _batch(c, batch_id)["counts"].get("running"), 60, what="a run of the series playing")
        for _ in range(5):  # the other run may still start meanwhile: then the poll answers that change
            before = _batch(c, batch_id)
            t0 = time.monotonic()
            still = _batch(c, batch_id, wait_ms=1500)
            waited = time.monotonic() - t0
            if still["counts"] == before["counts"]:
                break
            assert waited < 10  # woken by the change, or a change that landed as w came due
        assert still == before and 1.4 <= waited < 10, waited

        answered = {}

        def poll():
            t = time.monotonic()
            answered["batch"] = _batch(c, batch_id, wait_ms=30_000)
            answered["at"] = time.monotonic()
            answered["waited"] = answered["at"] - t
        poller = threading.Thread(target=poll)
        poller.start()
        # the long-poll listens for this series' ends before its playing run is cancelled
        until(lambda: paced.dispatcher.ends._listeners, 10, what="the long-poll waiting")
        playing = c.get("/api/v1/runs", params={"batch_id": batch_id, "status": "running"}).json()["runs"][0]["run_id"]
        cancelled = c.post(f"/api/v1/runs/{playing}/cancel").json()
        ended_at = time.monotonic()
        assert cancelled["cancelled"] and cancelled["run"]["status"] == "cancelled"
        poller.join(40)
        assert answered["batch"]["counts"]["cancelled"] == 1
        assert answered["waited"] < 20 and answered["at"] - ended_at < 2.0, answered
        # the answer may carry the summary from before the end; the next long-poll answers the one of the
        # cancelled run (its played ticks are scored) as soon as a worker's task has computed it
        latest = answered["batch"]
        if latest["summary"]["runs"] == 0:
            t0 = time.monotonic()
            latest = _batch(c, batch_id, wait_ms=30_000)
            assert time.monotonic() - t0 < 20 and latest["counts"] == answered["batch"]["counts"]
        assert latest["summary"]["runs"] == 1
        for run_id in run_ids:
            until(lambda: c.post(f"/api/v1/runs/{run_id}/cancel").status_code == 200, 30, every=0.5,
                  what="the cancel taken")
        t0 = time.monotonic()
        over = Studio.connect(paced.url, token).wait(batch_id, timeout_s=60)["batch"]
        assert over["status"] == "cancelled" and over["counts"] == {"cancelled": 2}
        # a series with no run left to play answers at once
        assert _batch(c, batch_id, wait_ms=30_000) == over and time.monotonic() - t0 < 20


@pytest.mark.anyio
async def test_wait_ms_out_of_bounds_is_bad_request_on_rest_and_mcp(srv):
    token = account(srv.core)
    with srv.client(token) as c:
        batch_id = c.post("/api/v1/runs", json=local_body(trials=2, season_ticks=10)).json()["batch"]["batch_id"]
        for bad in ("-1", "30001", "abc", "1.5", "", "１"):
            r = c.get(f"/api/v1/batches/{batch_id}", params={"wait_ms": bad})
            assert r.status_code == 400 and r.json() == {
                "error": "bad_request", "message": "wait_ms: send an integer of milliseconds from 0 to 30000"}, bad
        r = c.get("/api/v1/batches/bat_nope", params={"wait_ms": "100"})
        assert r.status_code == 404 and r.json()["error"] == "unknown_run"
        final = _followed(c, batch_id)[-1]
    async with connect(srv, token) as client:
        for bad in (-1, 30001, "x", True, 2.5):
            got = await client.call_tool("get_batch", {"id": batch_id, "wait_ms": bad})
            assert got.is_error and got.structured_content["error"] == "bad_request", bad
        got = await client.call_tool("get_batch", {"id": batch_id, "wait_ms": 30_000})
        assert not got.is_error and got.structured_content["batch"] == final  # ended: answered at once


def test_studio_wait_on_a_series_returns_at_its_end(srv):
    token = account(srv.core)
    with Studio.connect(srv.url, token=token) as remote:
        out = remote.launch_run(**local_body(trials=3, season_ticks=30))["batch"]
        over = remote.wait(out["batch_id"], timeout_s=120)["batch"]
    assert over["status"] == "finished" and over["counts"] == {"finished": 3}
    assert over["summary"]["runs"] == 3 and over["summary"]["seats"][0]["n"] == 3
    # in-process beside the server (no dispatcher in this process): the long-poll checks the store
    local = Studio(srv.data_dir, token)
    batch_id = local.launch_run(**local_body(trials=2, season_ticks=30))["batch"]["batch_id"]
    over = local.wait_series(batch_id, timeout_s=120)["batch"]
    assert over["status"] == "finished" and over["counts"] == {"finished": 2} and over["summary"]["runs"] == 2


def test_an_ended_series_is_never_answered_with_a_summary_of_some_of_its_runs(srv):
    """A directory listing that races a part's publishing rename may miss the part (POSIX allows it):
    the final summary then comes back over fewer matches than the series scored. It is asked again
    until the archive shows them all, never answered short. Here the series' seat parts are hidden
    from the archive for a second while the read asks for the final summary."""
    token = account(srv.core)
    with srv.client(token) as c:
        warm = c.post("/api/v1/runs", json=local_body(trials=2, season_ticks=30, grading="off")).json()["batch"]
        _ended(srv.core, warm["batch_id"])
        assert _batch(c, warm["batch_id"])["summary"]["runs"] == 2  # the summary actors are up and warm
        out = c.post("/api/v1/runs", json=local_body(trials=3, season_ticks=30, grading="off")).json()["batch"]
        batch_id = out["batch_id"]
        _ended(srv.core, batch_id)
        until(lambda: series_archived(srv.data_dir, SEATS_DIR, batch_id), 60, what="the series' parts published")
        parts = series_files(srv.data_dir, SEATS_DIR, batch_id)
        for p in parts:
            p.rename(p.with_name(p.name + ".away"))
        back = threading.Timer(1.0, lambda: [p.with_name(p.name + ".away").rename(p) for p in parts])
        back.start()
        try:
            final = _batch(c, batch_id)
        finally:
            back.join()
    assert final["status"] == "finished" and final["summary"]["runs"] == 3, final["summary"]
    assert final["summary"] == _fresh(srv.core, batch_id, out["run_ids"])
