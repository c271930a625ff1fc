"""Two `studio serve` heads on one store, one archive, one secret key file and one loopback Ray cluster
are one service: a token minted through one works on the other, an agent seat plays through the head
that does not dispatch (the exchange is the service's actor, not a head's), and when the dispatching
head is killed with -9 mid-series the other takes the lease within 15 s and the series ends with
exactly its trials, each match archived once and each run counted once.

The store is a parameter: SQLite in one data dir both heads open, or PostgreSQL named by
STUDIO_STORE_URL in the heads' environment only (not the Ray cluster's), each head then with a data dir
of its own beside a shared archive.
"""
from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections import Counter

import httpx
import pyarrow.parquet as pq
import pytest

from analytics.archive.layout import SEATS_DIR, series_archived, series_files
from tests import postgres
from tests.api.util import bearer
from tests.cluster.harness import CONFIG, TERMINAL, Head, series_body

pytestmark = pytest.mark.heads

# several heads in production share PostgreSQL: the tier runs them there, and on SQLite (one data dir
# both heads open) only where no PostgreSQL is at hand; each store's run takes minutes
STORES = ([pytest.param("postgresql", marks=pytest.mark.postgres)] if postgres.server_url() else ["sqlite"])
TAKEOVER_S = 15.0
# scripted matches slowed down, so that the series is still playing when its head is killed
HEADS_CONFIG = CONFIG + "[runs]\nmin_tick_ms = 15\nagent_absent_s = 60\n"


@pytest.fixture(scope="module", params=STORES)
def heads(request, cluster, tmp_path_factory):
    """Head A (first: it bootstraps the owner and takes the lease), then head B on the same service."""
    tmp = tmp_path_factory.mktemp("heads")
    env = {"STUDIO_SECRET_KEY_FILE": str(tmp / "secret.key")}
    stack = contextlib.ExitStack()
    if request.param == "sqlite":
        dirs = [tmp / "data"] * 2
        config = HEADS_CONFIG
    else:  # a database of this module's own (the pg_url fixture is per test)
        if postgres.server_url() is None:
            pytest.skip(postgres.HOW)
        env["STUDIO_STORE_URL"] = stack.enter_context(postgres.database())
        dirs = [tmp / "a", tmp / "b"]
        config = HEADS_CONFIG + f'[archive]\nuri = "{tmp / "archive"}"\nshared = true\n'
    for d in dirs:
        d.mkdir(exist_ok=True)
        (d / "config.toml").write_text(config)
    started = []
    try:
        a = Head(dirs[0], cluster.address, env)
        started.append(a)
        assert a.wait_up()["dispatching"] is True, a.log()
        b = Head(dirs[1], cluster.address, env)
        started.append(b)
        assert b.wait_up()["dispatching"] is False, b.log()
        # where the archive's default layout sits: the data dir's, or the shared path's parent
        yield a, b, a.token(), dirs[0] if request.param == "sqlite" else tmp
    finally:
        for h in started:
            h.stop()
        stack.close()


def _client(head: Head, token: str) -> httpx.Client:
    return httpx.Client(base_url=head.url, headers=bearer(token), timeout=60)


def _until(what: str, check, timeout: float, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while not (got := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)
    return got


def test_an_agent_seat_plays_through_the_head_that_does_not_dispatch(heads):
    a, b, token, _ = heads
    with _client(a, token) as on_a, _client(b, token) as on_b:
        me = on_b.get("/api/v1/me")  # the token A printed works on B: one store
        assert me.status_code == 200 and me.headers["X-Studio-Head"] == b.health()["head"] != a.health()["head"]
        body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 12,
                "env": {"turn_timeout_ms": 20000, "anchors": ["greedy-harvester"]},
                "roster": [{"provider": "agent", "model": "my-agent v0.1", "name": "Agent"},
                           {"model": "local/honest-trader"}]}
        r = on_a.post("/api/v1/runs", json=body)
        assert r.status_code == 201, r.text
        run_id = r.json()["run"]["run_id"]
        events: list[dict] = []
        follower = None
        turns = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # docs/AGENTS.md's loop, every call through B
            turn = on_b.get(f"/api/v1/runs/{run_id}/seats/0/turn", params={"wait_ms": 10000})
            assert turn.status_code == 200, turn.text
            turn = turn.json()
            if turn["status"] == "ended":
                break
            if turn["status"] == "your_turn":
                if follower is None:  # the match's live events, through B as well
                    match_id = on_b.get(f"/api/v1/runs/{run_id}").json()["run"]["match_id"]
                    follower = threading.Thread(target=_follow, args=(b.url, match_id, events), daemon=True)
                    follower.start()
                sent = on_b.post(f"/api/v1/runs/{run_id}/seats/0/actions",
                                 json={"tick": turn["tick"], "actions": [{"action": "move", "direction": "north"}]})
                assert sent.status_code == 200, sent.text
                turns.append(turn["tick"])
        assert turns == list(range(12)), (turns, a.log()[-3000:])
        run = _until("the run's end", lambda: (v := on_b.get(f"/api/v1/runs/{run_id}").json()["run"])["status"]
                     in TERMINAL and v, 60)
        assert run["status"] == "finished" and run["roster"][0]["turns"]["answered"] == 12
        follower.join(timeout=60)
        assert events and events[-1]["status"] == "finished", events[-3:]
        ticks = [e["tick"] for e in events]
        assert ticks == sorted(ticks) and len(set(ticks)) > 1
        assert run["roster"][0]["usage"]["agent_turns"] == 12
        usage = on_b.get("/api/v1/usage").json()["months"][0]["runs"]
        turns_played = sum(s["usage"]["agent_turns"] for s in run["roster"])
        assert [u["agent_turns"] for u in usage if u["run_id"] == run_id] == [turns_played]  # counted once


def _follow(url: str, match_id: str, events: list) -> None:
    import json

    with httpx.Client(base_url=url, timeout=120) as c, c.stream("GET", f"/api/matches/{match_id}/live") as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))


def test_killing_the_dispatching_head_mid_series_hands_the_series_to_the_other(heads):
    a, b, token, archive_root = heads
    trials = 16
    with _client(a, token) as on_a, _client(b, token) as on_b:
        r = on_a.post("/api/v1/runs", json=series_body(trials=trials, ticks=150))
        assert r.status_code == 201, r.text
        batch_id, run_ids = r.json()["batch"]["batch_id"], r.json()["batch"]["run_ids"]

        def statuses() -> Counter:  # followed on B
            return Counter(on_b.get(f"/api/v1/runs/{rid}").json()["run"]["status"] for rid in run_ids)
        _until("a few trials finished and others playing",
               lambda: (s := statuses())["finished"] >= 2 and s["finished"] < trials - 4, 240)
        a.proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        a.proc.wait()
        _until("head B taking the lease", lambda: (b.health() or {}).get("dispatching"), 60, every=0.1)
        took = time.monotonic() - killed
        assert took <= TAKEOVER_S, f"head B took the lease {took:.1f} s after the kill"

        _until("the series' end", lambda: statuses()["finished"] == trials, 600, every=0.5)
        series = on_b.get(f"/api/v1/batches/{batch_id}").json()["batch"]
        assert series["status"] == "finished" and series["run_ids"] == run_ids
        assert all(s["n"] == trials for s in series["summary"]["seats"])
        matches = [on_b.get(f"/api/v1/runs/{rid}").json()["run"]["match_id"] for rid in run_ids]
        assert len(set(matches)) == trials
        # the archive holds each trial's match once: none left by the killed head's workers
        _until("the series archived", lambda: series_archived(archive_root, SEATS_DIR, batch_id), 120)
        rows = Counter(m for p in series_files(archive_root, SEATS_DIR, batch_id)
                       for m in pq.read_table(p, columns=["match_id"]).column("match_id").to_pylist())
        assert set(rows) == set(matches) and len(set(rows.values())) == 1, rows
        usage = [u for m in on_b.get("/api/v1/usage").json()["months"] for u in m["runs"] if u["run_id"] in run_ids]
        assert sorted(u["run_id"] for u in usage) == sorted(run_ids)  # each trial counted once
        assert all(u["usd"] == {"account": 0.0, "platform": 0.0} for u in usage)
