"""Grading shared fairly between accounts (issue 38, F3): one account's big grading does not hold back
another account's small one, which finishes while the big one is still being graded. One grading task
at a time and parts of 16 decisions, so the order the parts go out in is what the test sees."""
from __future__ import annotations

import pytest

from tests.runs.conftest import CONFIG, account, local_body, start
from tests.waiting import until

FAIR = CONFIG + "[grading]\ntasks = 1\npart_decisions = 16\n"
NO_ANCHORS = {"anchors": []}


@pytest.fixture(scope="module")
def one_slot(tmp_path_factory):
    s = start(tmp_path_factory.mktemp("fair") / "data", FAIR)
    yield s
    s.stop()


def _grading(c, run_id: str) -> dict:
    return c.get(f"/api/v1/runs/{run_id}").json()["run"]["grading"]


def test_a_small_grading_finishes_beside_a_big_one_of_another_account(one_slot):
    with one_slot.client(account(one_slot.core)) as big, one_slot.client(account(one_slot.core)) as small:
        # about 240 decisions: 15 parts, each waiting its turn for the one slot
        a = big.post("/api/v1/runs", json=local_body(grading="all", season_ticks=120, env=NO_ANCHORS)).json()
        a = a["run"]["run_id"]
        until(lambda: _grading(big, a)["total"] > 0, 120, what="the big grading to be counted")
        b = small.post("/api/v1/runs", json=local_body(grading="all", season_ticks=10, env=NO_ANCHORS)).json()
        b = b["run"]["run_id"]
        until(lambda: _grading(small, b)["status"] == "done", 120, every=0.1, what="the small grading")
        big_now = _grading(big, a)
        # the small grading's count and parts went out between the big one's parts, not after them all
        assert big_now["status"] == "running" and big_now["graded"] < big_now["total"], big_now
        small_done = _grading(small, b)
        assert small_done["graded"] == small_done["total"] > 0
