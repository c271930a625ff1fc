"""Following a whole series through its batch read: the summary kept per change of its scored runs (the
same as a fresh one, never recomputed by a read that changed nothing), the `wait_ms` long-poll over REST
and MCP, and Studio.wait on a series. Real servers playing runs on the session's Ray."""
from __future__ import annotations

import json
import threading
import time

import pytest

from analytics.summary import series_summary
from api.python import Studio
from orchestrator import auth
from orchestrator.runs import series, summaries
from tests.mcp.conftest import connect
from tests.runs.conftest import CONFIG, account, local_body, start
from tests.waiting import until


@pytest.fixture(scope="module")
def paced(tmp_path_factory):
    """Runs at 20 ms a tick: a 2000-tick run plays for 40 s, long enough to wait on it."""
    s = start(tmp_path_factory.mktemp("paced") / "data", CONFIG + "[runs]\nmin_tick_ms = 20\n")
    yield s
    s.stop()


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


def _followed(c, batch_id: str) -> list[dict]:
    """Every state the long-poll answered, until no run of the series is left to play."""
    seen = [_batch(c, batch_id)]
    while seen[-1]["status"] in ("queued", "running"):
        seen.append(_batch(c, batch_id, wait_ms=10_000))
    return seen


def test_the_kept_summary_is_a_fresh_one_after_every_landed_run(paced):
    srv = paced  # paced runs go one per worker call: they land one by one
    token = account(srv.core)
    with srv.client(token) as c:
        batch_id = c.post("/api/v1/runs", json=local_body(trials=6, season_ticks=30)).json()["batch"]["batch_id"]
        seen = _followed(c, batch_id)
    assert seen[-1]["status"] == "finished" and seen[-1]["counts"] == {"finished": 6}
    assert len({b["summary"]["runs"] for b in seen}) >= 3  # the series was followed as its runs landed
    for b in seen:
        summary = b["summary"]
        # the summary covers exactly the runs that had ended when the states were read
        assert summary["runs"] == b["counts"].get("finished", 0) + b["counts"].get("cancelled", 0)
        if summary["runs"]:
            assert summary == _fresh(srv.core, batch_id, summary["run_ids"])
    kept = srv.core.store.one("SELECT version, matches, summary FROM batch_summaries WHERE batch_id = ?", (batch_id,))
    matches = [r["match_id"] for r in srv.core.store.all("SELECT match_id FROM runs WHERE batch_id = ?", (batch_id,))]
    assert kept["matches"] == 6 and kept["version"] == summaries.version(matches)
    assert json.loads(kept["summary"]) == seen[-1]["summary"]


def test_a_read_with_nothing_changed_computes_nothing(srv, monkeypatch):
    token = account(srv.core)
    with srv.client(token) as c:
        batch_id = c.post("/api/v1/runs", json=local_body(trials=3, season_ticks=30)).json()["batch"]["batch_id"]
        final = _followed(c, batch_id)[-1]
        computed = []
        monkeypatch.setattr(summaries, "series_summary", lambda *a, **k: computed.append(a) or series_summary(*a, **k))
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
            assert waited < 1.5
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
        assert answered["batch"]["summary"]["runs"] == 1  # the cancelled run's played ticks are scored
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
