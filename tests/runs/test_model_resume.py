"""Model runs that survive faults (docs/SEATS.md): every turn recorded as it happens, a run
whose worker dies or whose service stops resumes from its record and finishes once, billed once.

Real uvicorn, real Ray workers, a real fake provider on 127.0.0.1 answering the same action every
turn, so a resumed match can be held against one played straight through on the same seeds."""
import os
import signal

import pytest
import ray

from tests.runs.conftest import start, wait_terminal
from tests.runs.test_model_truth import FakeProvider, launch, self_hosted
from tests.waiting import until

SEATS = [{"model": "qwen2.5-7b", "provider": "openai-compatible", "name": "qwen"},
         {"model": "qwen2.5-7b", "provider": "openai-compatible", "name": "qwen-too"}]
SEEDS = {"seed": 11, "spawn_seed": 12}


@pytest.fixture
def fake():
    with FakeProvider() as server:
        server.defaults["qwen2.5-7b"] = {"calls": [("gather", {})], "usage": (100, 10), "delay_ms": 30}
        yield server


def _run(c, rid):
    return c.get(f"/api/v1/runs/{rid}").json()["run"]


def _transcript(c, rid) -> list[dict]:
    turns, cursor = [], None
    while True:
        page = c.get(f"/api/v1/runs/{rid}/transcript", params={"limit": 500, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        turns += page.json()["turns"]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return turns


def _log(c, run) -> list[str]:
    """The play-by-play below its first line (the run's name and match id)."""
    text = c.get(run["links"]["log"]).text
    assert "tick 39" in text
    return text.splitlines()[1:]


def test_a_killed_worker_resumes_the_run_which_finishes_as_if_never_interrupted(srv, fake):
    with self_hosted(srv, fake.url + "/v1", price=(1.0, 1.0)) as c:
        straight = launch(c, 40, SEATS, **SEEDS)
        rid = launch(c, 40, SEATS, **SEEDS)
        until(lambda: (_run(c, rid)["live"] or {}).get("tick", 0) >= 10, 90, what="ten ticks played")
        live = _transcript(c, rid)  # the transcript is written as turns happen
        assert len(live) >= 2 * 9 and {t["seat"] for t in live} == {0, 1}
        os.kill(ray.get(srv.dispatcher.by_run[rid].pid.remote()), signal.SIGKILL)
        run = wait_terminal(c, rid, timeout=120)["run"]
        other = wait_terminal(c, straight, timeout=120)["run"]
        assert run["status"] == other["status"] == "finished", run["error"]
        assert run["stop_reason"] == "season_end"
        results = c.get(f"/api/v1/runs/{rid}").json()["results"]
        assert results["match_ticks"] == 40 and run["agent_turns"]["settled"] == 2 * 40
        turns = _transcript(c, rid)
        assert sorted({t["tick"] for t in turns}) == list(range(40)) and len(turns) == 80
        for seat in run["roster"]:
            assert seat["turns"]["answered"] == seat["usage"]["agent_turns"] == 40
            assert seat["usage"]["input_tokens"] == 100 * 40  # no turn metered twice
        assert run["spend"]["usd"] == pytest.approx(sum(s["usage"]["usd"] for s in run["roster"]))
        # the replay gave the engine exactly what it had: the same match as one played straight through
        assert _log(c, run) == _log(c, other)


def test_sigterm_drains_at_a_tick_boundary_and_the_next_start_resumes(tmp_path, fake):
    data = tmp_path / "data"
    first = start(data)
    with self_hosted(first, fake.url + "/v1", price=(1.0, 1.0)) as c:
        rid = launch(c, 60, SEATS, **SEEDS)
        until(lambda: (_run(c, rid)["live"] or {}).get("tick", 0) >= 5, 90, what="five ticks played")
    first.stop()  # uvicorn's graceful exit, as SIGTERM: the dispatcher drains
    row = first.core.store.one("SELECT status, resumes, spend_usd FROM runs WHERE id = ?", (rid,))
    assert row["status"] == "queued" and row["resumes"] == 0 and row["spend_usd"] > 0
    recorded = first.core.store.one("SELECT COUNT(*) n FROM run_turns WHERE run_id = ?", (rid,))["n"]
    # drained at a tick boundary: every call the provider served is recorded, none in flight was lost
    assert recorded == len(fake.bodies("qwen2.5-7b")) and recorded % 2 == 0
    again = start(data)
    try:
        token = again.core.store.one("SELECT 1")  # the same data dir, a fresh process's view
        assert token is not None
        with again.client(_token_of(again, rid)) as c:
            run = wait_terminal(c, rid, timeout=120)["run"]
            assert run["status"] == "finished", run["error"]
            assert c.get(f"/api/v1/runs/{rid}").json()["results"]["match_ticks"] == 60
            turns = _transcript(c, rid)
            assert len(turns) == 120 == len(fake.bodies("qwen2.5-7b"))  # every call metered, none twice
            for seat in run["roster"]:
                assert seat["usage"]["input_tokens"] == 100 * 60
    finally:
        again.stop()


def _token_of(srv, rid) -> str:
    """A fresh token for the account owning the run (tokens are shown once; mint another)."""
    from orchestrator.auth import SCOPES, mint

    email = srv.core.store.one("SELECT a.email FROM runs r JOIN accounts a ON a.id = r.account_id WHERE r.id = ?",
                               (rid,))["email"]
    return mint(srv.core, email, scopes=SCOPES)[0]


def test_a_run_that_cannot_resume_again_fails_settling_every_seats_turns(srv, fake):
    from orchestrator.runs.lifecycle import MAX_RESUMES

    with self_hosted(srv, fake.url + "/v1", price=(1.0, 1.0)) as c:
        rid = launch(c, 400, [SEATS[0], {"model": "local/honest-trader"}])
        until(lambda: (_run(c, rid)["live"] or {}).get("tick", 0) >= 5, 90, what="five ticks played")
        with srv.core.store.write() as w:  # as if its match had taken its worker down MAX_RESUMES times
            w.execute("UPDATE runs SET resumes = ? WHERE id = ?", (MAX_RESUMES, rid))
        os.kill(ray.get(srv.dispatcher.by_run[rid].pid.remote()), signal.SIGKILL)
        run = wait_terminal(c, rid, timeout=90)["run"]
    assert run["status"] == "failed" and "stay metered" in run["error"]["message"]
    model, local = run["roster"]
    assert model["turns"]["answered"] >= 5 and local["usage"]["agent_turns"] >= 5  # the scripted seat's ticks too
    assert run["agent_turns"]["settled"] == model["usage"]["agent_turns"] + local["usage"]["agent_turns"]
