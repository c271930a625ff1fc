"""A fork of a model run (docs/FORKS.md): kept model seats are asked again from tick k with
their memory as it stood (their last turns, from the original's transcript), a seat handed to a
model starts with none; only the ticks from k are metered. A real fake provider on 127.0.0.1."""
import re

import pytest

from tests.runs.conftest import wait_terminal
from tests.runs.test_model_seats import model_account
from tests.seats.fake_provider import FakeProvider

GPT, CLAUDE = "openai/gpt-4o-mini", "claude-haiku-4-5"


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def _texts(body: dict) -> list[tuple[str, str]]:
    """(role, text) of a request's messages, tool call ids left out (a restored turn numbers its calls)
    and seat 2's name blanked: the fork hands that seat to another player, whose name a kept seat sees
    once seat 2 comes into its view (the run's seed is drawn, so whether it does varies)."""
    out = []
    for m in body["messages"]:
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(b.get("text", "") or str(b.get("input", "")) for b in content if isinstance(b, dict))
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or []]
        out.append((m["role"], re.sub(r"#2 [^\s,;)]+", "#2 _", f"{content or ''} {calls or ''}".strip())))
    return out


def test_kept_model_seats_remember_their_turns_before_the_fork(srv, fake):
    fake.defaults[GPT] = {"calls": [("move", {"direction": "north"}), ("gather", {})], "usage": (100, 20)}
    fake.defaults[CLAUDE] = {"calls": [("gather", {})], "text": "on it", "usage": (80, 10)}
    c, _ = model_account(srv, fake)
    roster = [{"model": GPT, "name": "gpt"}, {"model": CLAUDE, "provider": "anthropic", "name": "claude"},
              {"model": "local/greedy-harvester"}]
    with c:
        original = wait_terminal(c, c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1",
                                                                 "season_ticks": 12, "roster": roster}
                                           ).json()["run"]["run_id"], timeout=120)
        assert original["run"]["status"] == "finished"
        played = {m: fake.bodies(m) for m in (GPT, CLAUDE)}
        assert all(len(b) == 12 for b in played.values())
        fork = c.post("/api/v1/runs", json={"fork": {"run_id": original["run"]["run_id"], "tick": 8,
                                                     "seats": {"2": {"model": GPT, "name": "newcomer"}}}})
        assert fork.status_code == 201, fork.text
        fork = wait_terminal(c, fork.json()["run"]["run_id"], timeout=120)
    run = fork["run"]
    assert run["status"] == "finished", run["error"]
    gpt_bodies = fake.bodies(GPT)[12:]
    # told apart by the observation's own line: the kept seat also sees "#2 newcomer" when it comes near
    newcomer = [b for b in gpt_bodies if "you: #2 newcomer " in b["messages"][-1]["content"]]
    kept = [b for b in gpt_bodies if b not in newcomer]
    assert len(kept) == len(newcomer) == 4
    # the kept seat's first request at tick 8 is the one it sent at tick 8 in the original
    assert _texts(kept[0]) == _texts(played[GPT][8])
    # its memory: after 8 turns, ticks 6 and 7 (turns are dropped in blocks, seats.memory.held)
    assert "tick 6 of 12" in kept[0]["messages"][1]["content"]
    assert _texts(fake.bodies(CLAUDE)[12]) == _texts(played[CLAUDE][8])  # anthropic, tool results answered
    # the seat handed to a model starts with no memory: system prompt and the tick's observation only
    assert [m["role"] for m in newcomer[0]["messages"]] == ["system", "user"]
    assert [s["usage"]["agent_turns"] for s in run["roster"]] == [4, 4, 4]
    assert run["agent_turns"] == {"reserved": 12, "settled": 12}
    assert run["roster"][0]["usage"]["input_tokens"] == 4 * 100
