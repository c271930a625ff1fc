"""A seat's turn against a real HTTP server: replies, refusals, retries, timeouts, memory, pass-through."""
import time

import pytest

from orchestrator.seats import KeyRejected, play_tick
from orchestrator.seats.prompt import MEMORY_TURNS
from tests.seats.conftest import external_match, players_for, rows_of, run, with_client

ROUTER = {"model": "r/m", "provider": "router"}
CLAUDE = {"model": "claude-m", "provider": "anthropic"}


def play(fake, seats: dict, ticks=1, **kw):
    """Play `ticks` ticks of a match whose external seats are `seats`; returns (match, players, reports)."""
    match = external_match(len(seats), ticks=max(ticks, 2), apt=kw.pop("apt", 2))

    async def go(client):
        players = players_for(fake, client, seats, **kw)
        reports = [await play_tick(match, players) for _ in range(ticks)]
        return players, reports

    players, reports = run(with_client(go))
    return match, players, reports


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_tool_calls_become_actions_up_to_actions_per_turn(fake, seat):
    fake.script(seat["model"], {"calls": [("wait", {}), ("eat", {}), ("gather", {})]})
    match, players, _ = play(fake, {0: seat})
    kinds = [r["kind"] for r in rows_of(match, 0, tick=0)]
    assert kinds == ["wait", "eat"]  # the third call is over actions_per_turn=2


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_unknown_tool_and_wrong_argument_types_are_refused_with_reasons(fake, seat):
    fake.script(seat["model"], {"calls": [("fly", {"to": 3}), ("move", {"direction": 7})]},
                {"calls": [("offer", {"to": "one", "give": "wood", "give_qty": 1, "want": "food", "want_qty": 1})]})
    match, players, _ = play(fake, {0: seat}, ticks=2)
    t0 = rows_of(match, 0, tick=0)
    assert [(r["kind"], r["reason"]) for r in t0] == [("invalid", "unknown_action"), ("invalid", "bad_arguments")]
    # the event log is public: an unknown name the model made up is not repeated there, only in the transcript
    assert t0[0]["text"] == "unknown action" and "direction" in t0[1]["text"]
    assert "fly" in players[0].transcript[0]["refused"][0]
    t1 = rows_of(match, 0, tick=1)
    assert [(r["kind"], r["reason"]) for r in t1] == [("invalid", "bad_arguments")] and "'to'" in t1[0]["text"]
    assert not match.done or match.tick == 2  # the match went on


def test_malformed_replies_are_refused_and_the_match_goes_on(fake):
    fake.script("r/m", {"calls": [("move", '{"direction": "nor')]},     # tool arguments not JSON
                {"text": "I think I will go north."},                   # tools format, no call at all
                {"calls": [("gather", {})]})
    match, players, reports = play(fake, {0: ROUTER}, ticks=3)
    got = [[(r["kind"], r["reason"]) for r in rows_of(match, 0, tick=t)] for t in range(3)]
    assert got == [[("invalid", "bad_arguments")], [("invalid", "unknown_action")], [("gather", got[2][0][1])]]
    assert "not valid JSON" in rows_of(match, 0, tick=0)[0]["text"]
    # the public log names the cause; the reply's words stay in the owner's transcript
    assert rows_of(match, 0, tick=1)[0]["text"] == "malformed reply"
    assert "go north" in players[0].transcript[1]["refused"][0] and "go north" in players[0].transcript[1]["reply"]
    assert not any(r.waits for r in reports)


def test_json_format_reads_the_documented_object_and_refuses_anything_else(fake):
    seat = dict(ROUTER, format="json")
    fake.script("r/m", {"text": '```json\n{"actions": [{"action": "eat"}, {"action": "move", "direction": "west"}]}\n```'},
                {"text": "{'actions': broken"}, {"text": '{"actions": []}'})
    match, _, _ = play(fake, {0: seat}, ticks=3)
    assert [r["kind"] for r in rows_of(match, 0, tick=0)] == ["eat", "move"]
    bad = rows_of(match, 0, tick=1)
    assert [(r["kind"], r["reason"]) for r in bad] == [("invalid", "unknown_action")] and "malformed" in bad[0]["text"]
    assert [(r["kind"], r["a"]) for r in rows_of(match, 0, tick=2)] == [("wait", 0)]  # chosen wait
    assert "tools" not in fake.bodies("r/m")[0]


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_429_then_success_is_retried_within_the_turn(fake, seat):
    fake.script(seat["model"], {"status": 429, "headers": {"retry-after": "0"}}, {"status": 503},
                {"calls": [("eat", {})]})
    match, _, reports = play(fake, {0: seat})
    assert len(fake.bodies(seat["model"])) == 3
    assert [r["kind"] for r in rows_of(match, 0, tick=0)] == ["eat"] and not reports[0].waits


def test_persistent_500_waits_with_cause_no_reply(fake):
    fake.defaults["r/m"] = {"status": 500}
    t0 = time.perf_counter()
    match, players, reports = play(fake, {0: ROUTER}, timeout_ms=1500)
    assert time.perf_counter() - t0 < 2.5
    assert len(fake.bodies("r/m")) >= 2  # it retried before giving up
    assert reports[0].waits == {0: "no_reply"}
    assert [(r["kind"], r["a"]) for r in rows_of(match, 0, tick=0)] == [("wait", 2)]
    assert "HTTP 500" in players[0].last_error


def test_slow_seat_waits_with_cause_timeout_and_does_not_hold_the_tick(fake):
    fake.defaults["r/slow"] = {"calls": [("eat", {})], "delay_ms": 3000}
    fake.defaults["r/fast"] = {"calls": [("eat", {})], "delay_ms": 50}
    seats = {0: {"model": "r/slow", "provider": "router"}, 1: {"model": "r/fast", "provider": "router"}}
    t0 = time.perf_counter()
    match, _, reports = play(fake, seats, timeout_ms=400)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.5
    assert reports[0].waits == {0: "timeout"}
    assert [(r["kind"], r["a"]) for r in rows_of(match, 0, tick=0)] == [("wait", 1)]
    assert [r["kind"] for r in rows_of(match, 1, tick=0)] == ["eat"]


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE, dict(ROUTER, provider="openai"),
                                  dict(ROUTER, provider="ollama"), dict(ROUTER, provider="openai-compatible")],
                         ids=["router", "anthropic", "openai", "ollama", "openai-compatible"])
def test_rejected_key_raises_naming_seat_and_provider(fake, seat):
    fake.rejected_keys.add("k-bad")
    match = external_match(2)

    async def go(client):
        good = players_for(fake, client, {0: dict(ROUTER, model="r/ok")})
        bad = players_for(fake, client, {1: seat}, key="k-bad")
        await play_tick(match, {**good, **bad})

    with pytest.raises(KeyRejected) as e:
        run(with_client(go))
    assert e.value.provider == seat["provider"] and "roster[1]" in str(e.value) and seat["model"] in str(e.value)
    assert e.value.envelope()["error"] == "provider_key_rejected"
    assert match.tick == 0 and len(fake.bodies(seat["model"])) == 1  # not retried, and no tick submitted


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_memory_keeps_the_last_turns_in_a_valid_conversation(fake, seat):
    # the fake server refuses conversations whose tool calls are not answered, so any waits would show it
    fake.defaults[seat["model"]] = {"calls": [("wait", {}), ("eat", {}), ("say", {"text": "hi"})]}
    ticks = MEMORY_TURNS + 5
    match, _, reports = play(fake, {0: seat}, ticks=ticks)
    assert not any(r.waits for r in reports)
    bodies = fake.bodies(seat["model"])
    sizes = [len(b["messages"]) for b in bodies]
    held = [0, 1, 2, 3, 4, 2, 3, 4, 2]  # dropped in blocks: 4 turns, then the last 2 kept
    assert MEMORY_TURNS == 4 and len(held) == ticks
    if seat is ROUTER:  # system + per turn (user, assistant, 3 tool results) + the new observation
        assert sizes == [2 + 5 * h for h in held]
    else:
        assert sizes == [1 + 2 * h for h in held]
    # between drops a request extends the one before it: the prefix a prompt cache matches
    for t in range(1, ticks):
        if held[t] == held[t - 1] + 1:
            assert bodies[t]["messages"][: sizes[t - 1] - 1] == bodies[t - 1]["messages"][:-1]
    last = fake.bodies(seat["model"])[-1]["messages"][-1]
    text = last["content"] if isinstance(last["content"], str) else last["content"][-1]["text"]
    assert text.startswith(f"tick {ticks - 1} of")


def test_reasoning_temperature_and_max_tokens_pass_through(fake):
    seats = {0: dict(ROUTER, reasoning="high", temperature=0.3, max_tokens=777),
             1: {"model": "o-m", "provider": "openai", "reasoning": "low"},
             2: dict(CLAUDE, reasoning="medium"),
             3: dict(CLAUDE, model="claude-off"),
             4: dict(ROUTER, model="r/off", reasoning="off"),
             5: dict(ROUTER, model="r/unset", temperature=0.5)}
    play(fake, seats)
    router = fake.bodies("r/m")[0]
    assert router["reasoning"] == {"effort": "high"} and router["temperature"] == 0.3 and router["max_tokens"] == 777
    openai = fake.bodies("o-m")[0]
    assert openai["reasoning_effort"] == "low" and openai["max_completion_tokens"] == 8192 and "temperature" not in openai
    claude = fake.bodies("claude-m")[0]
    assert claude["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in claude
    off = fake.bodies("claude-off")[0]
    assert "thinking" not in off and "temperature" not in off and off["max_tokens"] == 1024
    assert fake.bodies("r/off")[0]["reasoning"] == {"effort": "none"}
    unset = fake.bodies("r/unset")[0]  # an unset reasoning sends nothing: the model's own default
    assert "reasoning" not in unset and unset["temperature"] == 0.5
    anthropic_req = next(r for r in fake.requests if r["body"]["model"] == "claude-m")
    assert anthropic_req["headers"]["authorization"] == "Bearer k-good"
    assert anthropic_req["headers"]["anthropic-version"] == "2026-10-21"
    tools = {t["name"]: t for t in claude["tools"]}
    assert tools["move"]["input_schema"]["properties"]["direction"]["enum"] == ["north", "east", "south", "west"]


def test_usage_is_metered_from_the_providers_usage_fields(fake):
    fake.script("r/m", {"calls": [("eat", {})], "usage": (1200, 80)}, {"calls": [("eat", {})], "usage": (1500, 20)})
    fake.script("claude-sonnet-4-5-20250929", {"calls": [("eat", {})], "usage": (1000, 100)},
                {"status": 500}, {"status": 500}, {"status": 500}, {"status": 500}, {"status": 500})
    seats = {0: dict(ROUTER, model="r/m"), 1: dict(CLAUDE, model="claude-sonnet-4-5-20250929")}
    match, players, reports = play(fake, seats, ticks=2, timeout_ms=600)
    u0, u1 = players[0].usage, players[1].usage
    assert (u0["agent_turns"], u0["input_tokens"], u0["output_tokens"]) == (2, 2700, 100)
    fallback_in, fallback_out = players[0].prices.fallback  # r/m is unknown: the fallback price
    assert u0["usd"] == pytest.approx((2700 * fallback_in + 100 * fallback_out) / 1e6)
    assert (u1["agent_turns"], u1["input_tokens"], u1["output_tokens"]) == (2, 1000, 100)
    assert u1["usd"] == pytest.approx((1000 * 3.0 + 100 * 15.0) / 1e6)  # claude-sonnet-4.5 list price
    assert reports[1].usage[0]["input_tokens"] == 1500 and reports[1].usage[1]["input_tokens"] == 0
    assert sum(r.usd for r in reports) == pytest.approx(u0["usd"] + u1["usd"])
