"""A grading survives its process: a restart takes up what was running and grades only what is
missing; a grading whose tasks keep failing stops after a bounded number of starts."""
from __future__ import annotations

import json
import secrets

from analytics.archive.store import Archive
from orchestrator.runs.head.grader import Grader
from orchestrator.grading.states import MAX_STARTS
from tests.runs.conftest import account, local_body, wait_terminal
from tests.waiting import until

SHORT = {"season_ticks": 16, "env": {"anchors": []}}


def _grading(core, run_id: str):
    return core.store.one("SELECT grading_status, graded, grading_total, grading_starts FROM runs WHERE id = ?",
                          (run_id,))


def _rows(core, run_id: str) -> dict:
    return {(r["tick"], r["seat"]): json.loads(r["turn"]) for r in core.store.all(
        "SELECT tick, seat, turn FROM decision_turns WHERE run_id = ?", (run_id,))}


def test_a_restart_mid_grading_grades_what_is_missing_and_the_same_grades_come_back(srv):
    with srv.client(account(srv.core)) as c:
        rid = c.post("/api/v1/runs", json=local_body(grading="all", **SHORT)).json()["run"]["run_id"]
        wait_terminal(c, rid)
        until(lambda: _grading(srv.core, rid)["grading_status"] == "done", 300, what="the first grading")
        before = _rows(srv.core, rid)
        # as a process that stopped mid-grading leaves it: running, half its grades stored
        with srv.core.store.write() as w:
            w.execute("DELETE FROM decision_turns WHERE run_id = ? AND tick % 2 = 1", (rid,))
            w.execute("UPDATE runs SET grading_status = 'running', graded = 0 WHERE id = ?", (rid,))
        grader = Grader(srv.core, Archive.of(srv.data_dir, srv.core.config), tasks=2).start()
        try:
            until(lambda: _grading(srv.core, rid)["grading_status"] == "done", 300, what="the resumed grading")
        finally:
            grader.stop()
        g = _grading(srv.core, rid)
        assert g["graded"] == g["grading_total"] == len(before)
        assert _rows(srv.core, rid) == before  # deterministic: the missing half graded again, identically
        assert c.get(f"/api/v1/runs/{rid}").json()["run"]["grading"]["status"] == "done"


def test_a_grading_whose_match_cannot_be_read_gives_up_after_its_starts(srv):
    with srv.client(account(srv.core)) as c:
        rid = c.post("/api/v1/runs", json=local_body(grading="all", **SHORT)).json()["run"]["run_id"]
        wait_terminal(c, rid)
        until(lambda: _grading(srv.core, rid)["grading_status"] == "done", 300, what="the first grading")
        with srv.core.store.write() as w:  # its match gone from the archive: every count task fails
            w.execute("DELETE FROM decision_turns WHERE run_id = ?", (rid,))
            w.execute("UPDATE runs SET grading_status = 'pending', graded = 0, grading_starts = 0, "
                      "match_id = ? WHERE id = ?", (secrets.token_hex(16), rid))  # no match: other tests ask for zeros
        until(lambda: _grading(srv.core, rid)["grading_status"] == "done", 300, what="the grading to give up")
        g = _grading(srv.core, rid)
        assert g["grading_starts"] == MAX_STARTS and g["graded"] == 0
