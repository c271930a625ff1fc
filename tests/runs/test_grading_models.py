"""auto grades a model seat and leaves the local one alone; the owner's console marks each graded turn
on the run page and the transcript page (a real fake provider on 127.0.0.1, the console over HTTP)."""
from __future__ import annotations

import re

import httpx
import pytest

from orchestrator import console_auth
from tests.runs.test_grading import _graded
from tests.runs.test_model_seats import model_account
from tests.runs.conftest import wait_terminal
from tests.seats.fake_provider import FakeProvider


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def test_auto_grades_the_model_seat_and_the_console_marks_its_turns(srv, fake):
    fake.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"})], "usage": (50, 5)}
    c, email = model_account(srv, fake, anthropic=False)
    with c:
        rid = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 12,
                                           "env": {"anchors": []},
                                           "roster": [{"model": "openai/gpt-4o-mini", "name": "gpt"},
                                                      {"model": "local/greedy-harvester"}]}).json()["run"]["run_id"]
        wait_terminal(c, rid)
        body = _graded(c, rid)
        decisions = c.get(f"/api/v1/runs/{rid}/decisions", params={"limit": 500}).json()["turns"]
    gpt, local = body["results"]["agents"]
    assert gpt["decisions"]["graded"] == body["run"]["grading"]["total"] > 0 and local["decisions"] is None
    assert {t["seat"] for t in decisions} == {0}

    with httpx.Client(base_url=srv.url, follow_redirects=True, timeout=30) as browser:
        browser.get(console_auth.login_link(srv.core, email, srv.url))
        run_page = browser.get(f"/console/runs/{rid}").text
        assert 'data-testid="run-grading"' in run_page and "decisions graded" in run_page
        assert f"{gpt['decisions']['accuracy']:.1f}" in run_page
        labelled = [t for t in decisions if t["label"]]
        # the worst turns first, ten to a page, with a link to the rest (issue 44)
        assert run_page.count('data-testid="graded-turn"') == min(10, len(labelled))
        assert ('data-testid="graded-next"' in run_page) == (len(labelled) > 10)
        transcript = browser.get(f"/console/runs/{rid}/transcript", params={"seat": 0}).text
    marks = re.findall(r'data-testid="turn-grade" class="(\w+)"', transcript)
    assert len(marks) == len(decisions)  # every graded turn of the page is marked
    assert sorted(m for m in marks if m != "graded") == sorted(t["label"] for t in labelled)
