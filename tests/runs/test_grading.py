"""Decision grading as a service (docs/RUBRIC.md): the run body's grading mode, grading on the
workers after the match, the run view's progress, results' decisions, the owner's decisions pages,
the public report's accuracy and regret graph, and the series summary's decision accuracy."""
from __future__ import annotations

import pytest

from tests.runs.conftest import account, local_body, wait_terminal
from tests.waiting import until

# few seats, a short season: a couple of hundred rollouts per decision still, so the test stays short
SHORT = {"season_ticks": 20, "env": {"anchors": []}}


def _graded(c, run_id: str, timeout: float = 300) -> dict:
    def done():
        body = c.get(f"/api/v1/runs/{run_id}").json()
        g = body["run"]["grading"]
        return body if g and g["status"] == "done" else None
    return until(done, timeout, every=0.2, what=f"the grading of run {run_id}")


@pytest.fixture(scope="module")
def graded_run(srv):
    """One world run graded under `all`: two local seats, every decision of both graded."""
    token = account(srv.core)
    with srv.client(token) as c:
        out = c.post("/api/v1/runs", json=local_body(grading="all", **SHORT))
        assert out.status_code == 201, out.text
        run = out.json()["run"]
        assert run["grading"] == {"status": "pending", "graded": 0, "total": 0}
        ended = wait_terminal(c, run["run_id"])
        body = _graded(c, run["run_id"])
    return {"token": token, "run_id": run["run_id"], "ended": ended, "body": body}


def test_all_grades_local_seats_and_fills_in_their_decisions(graded_run):
    body = graded_run["body"]
    g = body["run"]["grading"]
    assert g["total"] == g["graded"] > 0
    assert g["total"] <= 2 * SHORT["season_ticks"]  # a decision is a tick a seat was alive at
    for entry in body["results"]["agents"]:
        d = entry["decisions"]
        assert d["grader"] == "world-rollouts-1"
        assert d["graded"] > 0 and 0 <= d["accuracy"] <= 100
        assert d["blunders"] + d["mistakes"] + d["inaccuracies"] <= d["graded"]
    assert sum(e["decisions"]["graded"] for e in body["results"]["agents"]) == g["total"]


def test_results_are_there_before_grading_and_decisions_fill_in_after(graded_run):
    # the run ended with its results; grading never held them back
    ended = graded_run["ended"]
    assert ended["run"]["status"] == "finished" and ended["results"] is not None
    if ended["run"]["grading"]["status"] != "done":
        assert all(e["decisions"] is None for e in ended["results"]["agents"])


def test_decisions_page_through_every_graded_turn(srv, graded_run):
    with srv.client(graded_run["token"]) as c:
        rid = graded_run["run_id"]
        first = c.get(f"/api/v1/runs/{rid}/decisions", params={"seat": 0, "limit": 5}).json()
        assert (first["grader"], first["status"]) == ("world-rollouts-1", "done")
        assert first["horizon_ticks"] > 0 and first["rollouts"] > 0
        assert len(first["turns"]) == 5 and first["next_cursor"] == "5"
        turn = first["turns"][0]
        assert set(turn) == {"tick", "seat", "chosen", "value", "best", "best_value", "regret", "accuracy", "label"}
        assert turn["seat"] == 0 and turn["regret"] == pytest.approx(turn["best_value"] - turn["value"], abs=0.01)
        assert turn["chosen"] and all("action" in a for a in turn["chosen"])
        every, cursor = [], None
        while True:
            page = c.get(f"/api/v1/runs/{rid}/decisions",
                         params={"limit": 7, **({"cursor": cursor} if cursor else {})}).json()
            every += page["turns"]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert len(every) == graded_run["body"]["run"]["grading"]["total"]
        assert [(t["tick"], t["seat"]) for t in every] == sorted((t["tick"], t["seat"]) for t in every)
        assert every[:5] != first["turns"] or all(t["seat"] == 0 for t in every[:5])


def test_decisions_refuse_bad_queries_like_the_transcript(srv, graded_run):
    with srv.client(graded_run["token"]) as c:
        rid = graded_run["run_id"]
        for params in ({"seat": 2}, {"limit": 0}, {"limit": 501}, {"cursor": "x"}):
            got = c.get(f"/api/v1/runs/{rid}/decisions", params=params)
            same = c.get(f"/api/v1/runs/{rid}/transcript", params=params)
            assert got.status_code == same.status_code == 400
            assert got.json()["error"] == same.json()["error"] == "bad_request"


def test_a_foreign_account_gets_unknown_run(srv, graded_run):
    with srv.client(account(srv.core)) as c:
        got = c.get(f"/api/v1/runs/{graded_run['run_id']}/decisions")
        assert got.status_code == 404 and got.json()["error"] == "unknown_run"


def test_the_public_report_shows_accuracy_and_regret_but_no_replies(srv, graded_run):
    import httpx

    match_id = graded_run["body"]["run"]["match_id"]
    rep = httpx.get(f"{srv.url}/api/matches/{match_id}/report").json()
    seats = rep["decisions"]["seats"]
    assert [s["seat"] for s in seats] == [0, 1]
    for s in seats:
        assert 0 <= s["accuracy"] <= 100 and s["blunders"] >= 0
        assert len(s["regret"]) == s["graded"] and all(len(p) == 2 for p in s["regret"])
    html = httpx.get(f"{srv.url}/api/matches/{match_id}/report", params={"format": "html"}).text
    assert "Decisions" in html and "regret per tick" in html and "<polyline" in html
    first = graded_run["body"]["results"]["agents"][0]["decisions"]
    assert f"{first['accuracy']:.1f}" in html
    for word in ('"chosen"', '"best"', "reply"):
        assert word not in html and word not in str(rep["decisions"])


def test_off_grades_nothing_and_decisions_stay_null(srv, lab):
    out = lab.post("/api/v1/runs", json=local_body(grading="off", **SHORT)).json()
    assert out["run"]["grading"] == {"status": "off", "graded": 0, "total": 0}
    body = wait_terminal(lab, out["run"]["run_id"])
    assert body["run"]["grading"]["status"] == "off"
    assert all(e["decisions"] is None for e in body["results"]["agents"])
    page = lab.get(f"/api/v1/runs/{out['run']['run_id']}/decisions").json()
    assert page["status"] == "off" and page["turns"] == [] and page["next_cursor"] is None


def test_auto_with_only_local_seats_has_nothing_to_grade(srv, lab):
    out = lab.post("/api/v1/runs", json=local_body(**SHORT)).json()
    assert out["run"]["grading"] is None
    body = wait_terminal(lab, out["run"]["run_id"])
    assert body["run"]["grading"] is None
    assert all(e["decisions"] is None for e in body["results"]["agents"])
    assert lab.get(f"/api/v1/runs/{out['run']['run_id']}/decisions").json()["status"] is None


@pytest.mark.parametrize("value", ["sometimes", "", 1, ["all"]])
def test_a_bad_grading_value_is_refused_naming_the_field(srv, lab, value):
    got = lab.post("/api/v1/runs", json=local_body(grading=value))
    assert got.status_code == 400, got.text
    assert got.json()["error"] == "bad_request" and "grading" in got.json()["message"]
    est = lab.post("/api/v1/runs/estimate", json=local_body(grading=value))
    assert est.status_code == 400 and est.json()["error"] == "bad_request"


def test_the_series_summary_carries_decision_accuracy_with_its_interval(srv, lab):
    out = lab.post("/api/v1/runs", json=local_body(grading="all", trials=2, **SHORT)).json()
    for rid in out["batch"]["run_ids"]:
        wait_terminal(lab, rid)
        _graded(lab, rid)
    seats = lab.get(f"/api/v1/batches/{out['batch']['batch_id']}").json()["batch"]["summary"]["seats"]
    for s in seats:
        acc = s["decision_accuracy"]
        assert acc["n"] == 2 and acc["method"] and acc["confidence"] == 0.95
        assert acc["low"] <= acc["estimate"] <= acc["high"]
        assert 0 <= acc["estimate"] <= 100


def test_a_series_graded_off_has_no_decision_accuracy(srv, lab):
    out = lab.post("/api/v1/runs", json=local_body(grading="off", trials=2, **SHORT)).json()
    for rid in out["batch"]["run_ids"]:
        wait_terminal(lab, rid)
    seats = lab.get(f"/api/v1/batches/{out['batch']['batch_id']}").json()["batch"]["summary"]["seats"]
    assert seats and all(s["decision_accuracy"] is None for s in seats)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_get_decisions_answers_the_rest_body(srv, graded_run):
    from tests.mcp.conftest import call, connect, ok

    rid = graded_run["run_id"]
    with srv.client(graded_run["token"]) as c:
        rest = c.get(f"/api/v1/runs/{rid}/decisions", params={"seat": 1, "limit": 4}).json()
    async with connect(srv.url, graded_run["token"]) as client:
        assert await ok(client, "get_decisions", {"id": rid, "seat": 1, "limit": 4}) == rest
        refused, body = await call(client, "get_decisions", {"id": rid, "seat": 9})
        assert refused and body["error"] == "bad_request"
    async with connect(srv.url, account(srv.core)) as client:
        refused, body = await call(client, "get_decisions", {"id": rid})
        assert refused and body["error"] == "unknown_run"


def test_python_get_decisions_is_the_same_service_call(srv, graded_run):
    from api.python import Studio

    rid = graded_run["run_id"]
    studio = Studio(srv.data_dir, graded_run["token"], read_only=True)
    try:
        with srv.client(graded_run["token"]) as c:
            assert studio.get_decisions(id=rid, limit=3) == c.get(f"/api/v1/runs/{rid}/decisions?limit=3").json()
    finally:
        studio.close()
