"""Cancel in each state, a killed worker, a restart mid-run: no run is ever left stuck."""
import os
import signal

import pytest
import ray

from orchestrator.runs.admission.admit import WORKER_START_MS
from tests.runs.conftest import CONFIG, PACED, account, local_body, start, wait_terminal
from tests.waiting import until


@pytest.fixture(scope="module")
def paced(tmp_path_factory):
    """This module's own paced server: its tests kill and replace workers, which the session's paced
    server (conftest) must not see (a series there is followed as its runs land one by one)."""
    s = start(tmp_path_factory.mktemp("paced") / "data", PACED)
    yield s
    s.stop()


def wait_status(c, run_id, status, timeout=30):
    def reached():
        run = c.get(f"/api/v1/runs/{run_id}").json()["run"]
        return run if run["status"] == status and (status != "running" or (run["live"] or {}).get("tick", 0) > 0) \
            else None
    return until(reached, timeout, what=f"{run_id} reaching {status}")


def test_cancel_queued_is_immediate_and_never_gets_a_match(idle):
    with idle.client(account(idle.core)) as c:
        run = c.post("/api/v1/runs", json=local_body()).json()["run"]
        assert run["status"] == "queued"
        r = c.post(f"/api/v1/runs/{run['run_id']}/cancel").json()
        assert r["ok"] and r["cancelled"] is True
        assert r["run"]["status"] == "cancelled" and r["run"]["stop_reason"] == "cancelled"
        body = c.get(f"/api/v1/runs/{run['run_id']}").json()
        assert body["run"]["links"] is None and body["results"] is None and body["run"]["match_id"] is None
        assert body["run"]["agent_turns"]["settled"] == 0
        again = c.post(f"/api/v1/runs/{run['run_id']}/cancel").json()
        assert again["cancelled"] is False and again["run"]["status"] == "cancelled"


def test_cancel_while_launching_answers_409(idle):
    with idle.client(account(idle.core)) as c:
        rid = c.post("/api/v1/runs", json=local_body()).json()["run"]["run_id"]
        with idle.core.store.write() as db:  # the moment the dispatcher hands the run to the world
            db.execute("UPDATE runs SET status = 'launching' WHERE id = ?", (rid,))
        r = c.post(f"/api/v1/runs/{rid}/cancel")
        assert r.status_code == 409 and r.json()["error"] == "run_launching"
        assert c.get(f"/api/v1/runs/{rid}").json()["run"]["status"] == "launching"


def test_cancel_running_stops_at_a_tick_and_scores_what_played(paced):
    with paced.client(account(paced.core)) as c:
        rid = c.post("/api/v1/runs", json=local_body(season_ticks=600)).json()["run"]["run_id"]
        running = wait_status(c, rid, "running")
        assert running["links"] is not None and running["live"]["season_ticks"] == 600
        r = c.post(f"/api/v1/runs/{rid}/cancel").json()
        assert r["cancelled"] is True
        body = wait_terminal(c, rid)
        run, res = body["run"], body["results"]
        assert run["status"] == "cancelled" and run["stop_reason"] == "cancelled"
        assert 0 < res["match_ticks"] < 600
        assert run["agent_turns"]["settled"] == 2 * res["match_ticks"]  # nothing metered past the stop
        assert c.get(run["links"]["log"]).status_code == 200


def test_killed_worker_requeues_its_scripted_runs_and_is_replaced_once(paced):
    with paced.client(account(paced.core)) as c:
        ids = [c.post("/api/v1/runs", json=local_body(season_ticks=200)).json()["run"]["run_id"] for _ in range(4)]
        victim = ids[0]
        wait_status(c, victim, "running")
        worker = paced.dispatcher.by_run[victim]
        doomed = [r for r in ids if paced.dispatcher.by_run.get(r) is worker]  # its second job waits inside it
        waiting = [r for r in doomed if r != victim]
        for rid in waiting:  # a job waiting inside a worker has not started
            run = c.get(f"/api/v1/runs/{rid}").json()["run"]
            assert run["status"] == "launching" and run["started_at_ms"] is None and run["live"] is None
        first_match = c.get(f"/api/v1/runs/{victim}").json()["run"]["match_id"]
        pid = ray.get(worker.pid.remote())
        os.kill(pid, signal.SIGKILL)
        for rid in ids:  # scripted runs are replayed, as a restart does: none fails, all are metered once
            body = wait_terminal(c, rid, timeout=180)
            assert body["run"]["status"] == "finished" and body["run"]["error"] is None
            assert body["run"]["agent_turns"]["settled"] == 400 and body["results"]["match_ticks"] == 200
        assert c.get(f"/api/v1/runs/{victim}").json()["run"]["match_id"] != first_match
        archive = paced.data_dir / "archive"
        assert not [p for sub in ("events", "seats") for p in (archive / sub).glob(f"{first_match}.*")]
        assert len(paced.dispatcher.workers) == 2  # one replacement, however many jobs the dead one held


def test_cancel_from_another_process_stops_the_run(paced):
    from api.python import Studio

    token = account(paced.core)
    with paced.client(token) as c:
        rid = c.post("/api/v1/runs", json=local_body(season_ticks=600)).json()["run"]["run_id"]
        wait_status(c, rid, "running")
        with Studio(paced.data_dir, token) as notebook:  # no dispatcher here: the server plays the run
            answer = notebook.cancel_run(id=rid)
        assert answer["cancelled"] is True
        body = wait_terminal(c, rid)
        assert body["run"]["status"] == "cancelled" and body["results"]["match_ticks"] < 600


def test_restart_mid_run_requeues_and_finishes(tmp_path):
    s = start(tmp_path / "data", PACED)
    token = account(s.core)
    with s.client(token) as c:
        rid = c.post("/api/v1/runs", json=local_body(season_ticks=300)).json()["run"]["run_id"]
        wait_status(c, rid, "running")
    s.stop()  # the service goes down while the run plays
    row = s.core.store.one("SELECT status, match_id FROM runs WHERE id = ?", (rid,))
    assert row["status"] == "running"
    # whatever was landed for that match before the store heard of it must not outlive the replay
    stale = tmp_path / "data" / "archive" / "events" / f"{row['match_id']}.arrow"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"partial")
    s2 = start(tmp_path / "data", CONFIG)  # same data dir, full speed
    try:
        with s2.client(token) as c:
            body = wait_terminal(c, rid)
            assert body["run"]["status"] == "finished" and body["results"]["match_ticks"] == 300
            assert body["run"]["agent_turns"]["settled"] == 600
            assert not stale.exists() and body["run"]["match_id"] != row["match_id"]
    finally:
        s2.stop()


def _settle(d, timeout: float = 60) -> None:
    until(lambda: not d.warming, timeout, what="the workers finishing their start")


def test_the_estimate_allows_for_workers_still_starting(paced):
    d = paced.dispatcher
    body = local_body(trials=4)
    with paced.client(account(paced.core)) as c:
        def span():
            return c.post("/api/v1/runs/estimate", json=body).json()["batch"]["wall_clock_ms"]
        _settle(d)
        warm = span()
        old = d.workers[0]
        d._replace(old)  # as after a lost worker: its replacement starts a process, imports, loads kernels
        ray.kill(old)
        assert d.warming
        starting = span()
        assert starting == {"low": warm["low"], "high": warm["high"] + WORKER_START_MS}
        _settle(d)
        assert span() == warm
