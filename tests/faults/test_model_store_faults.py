"""A model run while the store refuses writes: its turns wait and are written once the store takes
them again, and only a store that stays unwritable fails the run, naming the cause
(docs/SEATS.md: nothing metered is lost, transcripts are written as turns happen)."""
from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from tests.faults.conftest import FIRST_TICKS_S, fill
from tests.faults.test_disk_full import _played
from tests.runs.conftest import CONFIG, start, wait_terminal
from tests.runs.test_model_resume import SEATS, _run, _transcript
from tests.runs.test_model_truth import FakeProvider, launch, self_hosted
from tests.waiting import until

pytestmark = pytest.mark.usefixtures("ray_pool")  # its servers play in this process


def _fake():
    server = FakeProvider()
    server.defaults["qwen2.5-7b"] = {"calls": [("gather", {})], "usage": (100, 10), "delay_ms": 20}
    return server


def _hold_the_write_lock(data_dir, release: threading.Event) -> threading.Thread:
    """Another process's writer: the store refuses every write past its busy wait while it holds on."""
    held = threading.Event()

    def hold():
        c = sqlite3.connect(data_dir / "studio.db", isolation_level=None)
        c.execute("BEGIN IMMEDIATE")
        held.set()
        release.wait(120)
        c.execute("COMMIT")
        c.close()
    t = threading.Thread(target=hold, daemon=True)
    t.start()
    held.wait(5)
    return t


def test_a_full_disk_pauses_a_model_run_and_loses_no_turn(tmpfs):
    with _fake() as fake:
        srv = start(tmpfs / "data")
        try:
            with self_hosted(srv, fake.url + "/v1", price=(1.0, 1.0)) as c:
                rid = launch(c, 50, SEATS)
                until(lambda: (_run(c, rid)["live"] or {}).get("tick", 0) >= 5, FIRST_TICKS_S, what="five ticks played")
                filler = fill(tmpfs)
                time.sleep(3)  # the spell: the run meets a full disk for these seconds
                filler.unlink()
                run = wait_terminal(c, rid, timeout=120)["run"]
                assert run["status"] == "finished", run["error"]
                assert len(_transcript(c, rid)) == 100
                for seat in run["roster"]:
                    assert seat["usage"]["input_tokens"] == 100 * seat["turns"]["answered"] == 100 * 50
        finally:
            srv.stop()


def test_a_store_that_stays_held_fails_the_model_run_naming_why(tmp_path):
    with _fake() as fake:
        srv = start(tmp_path / "data", CONFIG + "\n[runs]\nrecord_patience_s = 2\n[store]\nbusy_timeout_s = 1\n")
        try:
            with self_hosted(srv, fake.url + "/v1", price=(1.0, 1.0)) as c:
                rid = launch(c, 400, SEATS)
                until(lambda: (_run(c, rid)["live"] or {}).get("tick", 0) >= 3, FIRST_TICKS_S,
                      what="three ticks played")
                # held past the store's busy wait (1 s here) and the run's 2 s patience: the recorder gives
                # up and the worker hands back the failed run, which the store takes once it is free
                release = threading.Event()
                holder = _hold_the_write_lock(tmp_path / "data", release)
                until(lambda: _played(srv.dispatcher, rid), 90, what="the worker giving the run up")
                release.set()
                holder.join()
                run = wait_terminal(c, rid, timeout=120)["run"]
            assert run["status"] == "failed"
            message = run["error"]["message"]
            assert "could not record this run's turns" in message and "database is locked" in message, message
            served = len(fake.bodies("qwen2.5-7b"))
            answered = sum(s["turns"]["answered"] for s in run["roster"])
            assert served - 2 <= answered <= served  # at most the turns waiting on the store went unmetered
        finally:
            srv.stop()
