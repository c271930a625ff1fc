"""A disk-full spell while runs play: the store refuses writes, the dispatcher keeps what it could not
record and writes it once there is room again. No run stays running, reads keep answering, a cancel
sent meanwhile takes effect, and every result is archived once there is room (no run fails for a spell
shorter than `[runs] record_patience_s`)."""
from __future__ import annotations

import time

import pytest
import ray

from tests.faults.conftest import FIRST_TICKS_S, fill
from tests.runs.conftest import CONFIG, account, local_body, start
from tests.waiting import until

pytestmark = pytest.mark.usefixtures("ray_pool")  # its servers play in this process

PACED = CONFIG + "\n[runs]\nmin_tick_ms = 10\n"
TERMINAL = ("finished", "failed", "cancelled")


def _status(c, rid):
    return c.get(f"/api/v1/runs/{rid}").json()["run"]


def _played(d, run_id: str) -> bool:
    """The run's worker has finished it, whether or not the dispatcher has collected the result."""
    if run_id not in d.by_run:
        return True
    refs = [ref for ref, (ids, _) in list(d.inflight.items()) if run_id in ids]
    return bool(refs and ray.wait(refs, timeout=0)[0])


def test_a_full_disk_strands_no_run_and_loses_no_result(tmpfs):
    s = start(tmpfs / "data", PACED)
    try:
        token = account(s.core)
        with s.client(token) as c:
            rids = [c.post("/api/v1/runs", json=local_body(season_ticks=150)).json()["run"]["run_id"]
                    for _ in range(3)]
            until(lambda: (run := _status(c, rids[0]))["status"] == "running" and run["live"]["tick"], FIRST_TICKS_S)
            filler = fill(tmpfs)  # every result from here on meets a full disk
            try:
                started = time.monotonic()
                assert c.get("/api/v1/me").status_code == 200  # reads never wait on a write
                assert c.get(f"/api/v1/runs/{rids[0]}").status_code == 200
                assert time.monotonic() - started < 2
                cancel = c.post(f"/api/v1/runs/{rids[2]}/cancel")
                assert cancel.status_code in (200, 503), cancel.text
                if cancel.status_code == 503:  # the store could not take the cancel: retry later
                    assert cancel.json()["error"] == "unavailable" and cancel.headers["retry-after"]
                until(lambda: _played(s.dispatcher, rids[0]), 60, what="the first run's worker ending it")
                # the dispatcher cannot record it while the disk is full: its write waits, or it landed
                until(lambda: s.dispatcher._pending or _status(c, rids[0])["status"] in TERMINAL, 30)
            finally:
                filler.unlink()

            def ended(rid):
                run = _status(c, rid)
                if rid == rids[2] and run["status"] == "queued" and cancel.status_code == 503:
                    c.post(f"/api/v1/runs/{rid}/cancel")
                return run if run["status"] in TERMINAL else None
            runs = [until(lambda: ended(rid), 120, every=0.1, what=f"the end of {rid}") for rid in rids]
        for run in runs:  # a spell shorter than the patience fails nothing: landing waited and retried
            assert run["status"] in ("finished", "cancelled"), run["error"]
            if run["status"] == "finished":
                assert run["agent_turns"]["settled"] == 300
        assert not s.core.store.one("SELECT COUNT(*) n FROM runs WHERE status IN ('queued', 'launching', "
                                    "'running')")["n"]
    finally:
        s.stop()


def test_an_archive_that_stays_full_fails_the_run_naming_the_cause(archive_apart, archive_disk):
    """The archive on its own disk (a shared mount, say) that fills while the store still takes writes:
    the result waits for room as long as the patience allows, then its run fails naming the cause."""
    s = archive_apart
    token = account(s.core)
    with s.client(token) as c:
        rid = c.post("/api/v1/runs", json=local_body(season_ticks=100)).json()["run"]["run_id"]
        until(lambda: (run := _status(c, rid))["status"] == "running" and run["live"]["tick"], FIRST_TICKS_S)
        filler = fill(archive_disk)
        try:
            # past the patience the dispatcher gives the result up, while the store still takes writes
            until(lambda: _status(c, rid)["status"] == "failed", 60, what="the run failing")
        finally:
            filler.unlink()
        run = until(lambda: (lambda r: r if r["status"] in TERMINAL else None)(_status(c, rid)), 60, every=0.1)
    assert run["status"] == "failed"
    msg = run["error"]["message"]
    assert "could not be archived" in msg and "no space left on device" in msg.lower(), msg
    assert "ray::" not in msg and "pid=" not in msg
