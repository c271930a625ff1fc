"""A server that plays agent seats: tests/runs' real uvicorn + dispatcher on the session's local Ray,
with the agent-absent window shortened (`[runs] agent_absent_s`) so an absent agent fails in seconds."""
from __future__ import annotations

import time

import httpx
import pytest

from tests.runs.conftest import CONFIG, Server, account, start

# Patient enough for agents that start a process first (an example agent, `inspect eval`); only a
# module that tests absence itself needs a shorter window (test_rest.py sets its own ABSENT_S).
ABSENT_S = 60


def agent_config(absent_s: float) -> str:
    return CONFIG + f"[runs]\nagent_absent_s = {absent_s:g}\n"


@pytest.fixture(scope="session", autouse=True)
def ray_session(ray_pool):
    yield


@pytest.fixture(scope="package")
def servers(tmp_path_factory):
    """One server per absent window, shared by the modules that ask for it (each test on its own
    account): started when a module first asks."""
    started: dict[float, Server] = {}

    def get(absent_s: float) -> Server:
        if absent_s not in started:
            started[absent_s] = start(tmp_path_factory.mktemp("agents") / "data", agent_config(absent_s))
        return started[absent_s]
    yield get
    for s in started.values():
        s.stop()


@pytest.fixture(scope="module")
def srv(request, servers) -> Server:
    """The server with the module's window (its ABSENT_S, or the patient default)."""
    return servers(getattr(request.module, "ABSENT_S", ABSENT_S))


@pytest.fixture
def token(srv) -> str:
    return account(srv.core)


@pytest.fixture
def lab(srv, token) -> httpx.Client:
    with srv.client(token) as c:
        yield c


def world_body(ticks: int = 20, **over) -> dict:
    """An agent seat against a scripted seat and the base world's anchors."""
    body = {"scenario_id": "svc:custom-base-v1", "season_ticks": ticks,
            "env": {"turn_timeout_ms": 5000, "anchors": ["greedy-harvester"]},
            "roster": [{"provider": "agent", "model": "my-agent v0.1", "name": "Agent"},
                       {"model": "local/honest-trader"}]}
    body.update(over)
    return body


def play_rest(c: httpx.Client, run_id: str, seat: int, policy, timeout_s: float = 120) -> list[dict]:
    """The REST loop of docs/AGENTS.md: ask with a long-poll, answer each open turn, until the run ends.
    Returns every turn answered."""
    answered = []
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        r = c.get(f"/api/v1/runs/{run_id}/seats/{seat}/turn", params={"wait_ms": 10000})
        assert r.status_code == 200, r.text
        turn = r.json()
        if turn["status"] == "ended":
            return answered
        if turn["status"] == "your_turn":
            r = c.post(f"/api/v1/runs/{run_id}/seats/{seat}/actions",
                       json={"tick": turn["tick"], "actions": policy(turn)})
            assert r.status_code == 200, r.text
            answered.append(turn)
    raise TimeoutError(f"run {run_id} did not end within {timeout_s} s")
