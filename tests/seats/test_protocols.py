"""Today's wire protocols exactly: every provider kind's requests checked against the official SDKs'
request types and against what the SDKs themselves send; replies built with the SDKs' response models."""
import json

import anthropic
import openai
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from orchestrator.seats import play_tick
from orchestrator.seats.prices import PriceTable
from orchestrator.seats.anthropic_chat import AnthropicChat
from orchestrator.seats.client import new_client
from tests.seats.conftest import base_url, external_match, players_for, rows_of, run, with_client
from tests.seats.fake_provider import check_openai
from tests.seats.sdk_types import problems

KINDS = [{"model": "r/m", "provider": "router", "reasoning": "medium", "temperature": 0.4},
         {"model": "gpt-5.1", "provider": "openai", "reasoning": "off", "temperature": 0.4},
         {"model": "llama3", "provider": "ollama", "reasoning": "low"},
         {"model": "qwen", "provider": "openai-compatible", "format": "json", "max_tokens": 300},
         {"model": "claude-sonnet-4-5", "provider": "anthropic", "reasoning": "high"}]
IDS = [k["provider"] for k in KINDS]
# OpenRouter's own request field, beside the OpenAI ones
EXTRA = {"router": frozenset({"reasoning"})}


def play(fake, seats: dict, ticks: int, **kw):
    match = external_match(len(seats), ticks=ticks + 1)

    async def go(client):
        players = players_for(fake, client, seats, **kw)
        reports = [await play_tick(match, players) for _ in range(ticks)]
        return players, reports
    players, reports = run(with_client(go))
    return match, players, reports


def sdk_type(provider: str):
    return MessageCreateParamsNonStreaming if provider == "anthropic" else CompletionCreateParamsNonStreaming


@pytest.mark.parametrize("seat", KINDS, ids=IDS)
def test_every_request_conforms_to_the_sdks_request_type(fake, seat):
    # parallel calls, a thinking block and memory of earlier turns: the conversation the SDK types must take
    fake.defaults[seat["model"]] = {"calls": [("move", {"direction": "north"}), ("eat", {})], "text": "plan",
                                    "thinking": [("I should eat.", "sig-1")], "redacted": ["opaque=="]} \
        if seat["provider"] == "anthropic" else {"calls": [("move", {"direction": "north"}), ("eat", {})]}
    play(fake, {0: seat}, 4)
    bodies = fake.bodies(seat["model"])
    assert len(bodies) == 4
    for body in bodies:
        assert problems(body, sdk_type(seat["provider"]), extra=EXTRA.get(seat["provider"], frozenset())) == []
    assert problems({**bodies[0], "invented": 1}, sdk_type(seat["provider"]))  # the check can fail


def sdk_call(fake, seat: dict, body: dict) -> dict:
    """Send `body` through the official SDK to the fake provider; returns the request it recorded."""
    body = dict(body)
    extra = {k: body.pop(k) for k in EXTRA.get(seat["provider"], ())if k in body}
    if seat["provider"] == "anthropic":
        client = anthropic.Anthropic(api_key="k-good", base_url=fake.url, max_retries=0)
        client.messages.create(**body)
    else:
        client = openai.OpenAI(api_key="k-good", base_url=base_url(fake, seat["provider"]), max_retries=0)
        client.chat.completions.create(**body, extra_body=extra or None)
    return fake.requests[-1]


@pytest.mark.parametrize("seat", KINDS, ids=IDS)
def test_requests_match_what_the_official_sdk_sends(fake, seat):
    play(fake, {0: seat}, 2)
    ours = next(r for r in reversed(fake.requests) if r["body"].get("model") == seat["model"])
    theirs = sdk_call(fake, seat, ours["body"])  # the SDK's signature refuses any parameter it does not know
    assert theirs["body"] == ours["body"]
    for header in ("authorization", "accept", "content-type", "anthropic-version", "x-api-key"):
        assert ours["headers"].get(header) == theirs["headers"].get(header), header
    assert ours["headers"]["user-agent"].startswith("ScenarioStudio/")
    if seat["provider"] == "anthropic":
        assert ours["headers"]["anthropic-version"] == anthropic._constants.ANTHROPIC_API_VERSION


def test_reasoning_per_model_family_and_an_unset_reasoning_sends_nothing(fake):
    seats = {0: {"model": "gpt-5.1", "provider": "openai", "reasoning": "off"},
             1: {"model": "gpt-5-mini", "provider": "openai", "reasoning": "off"},
             2: {"model": "gpt-4o", "provider": "openai", "reasoning": "off", "temperature": 0.2},
             3: {"model": "o3", "provider": "openai"},
             4: {"model": "r/unset", "provider": "router"},
             5: {"model": "claude-unset", "provider": "anthropic"},
             6: {"model": "gpt-5", "provider": "openai", "reasoning": "high", "temperature": 0.2}}
    play(fake, seats, 1)
    body = {m: fake.bodies(m)[0] for m in ("gpt-5.1", "gpt-5-mini", "gpt-4o", "o3", "r/unset", "claude-unset", "gpt-5")}
    assert body["gpt-5.1"]["reasoning_effort"] == "none"        # 5.1 and later turn reasoning off
    assert body["gpt-5-mini"]["reasoning_effort"] == "minimal"  # gpt-5 cannot: the least it does
    assert "reasoning_effort" not in body["gpt-4o"] and body["gpt-4o"]["temperature"] == 0.2
    assert "reasoning_effort" not in body["o3"]
    assert "reasoning" not in body["r/unset"] and "thinking" not in body["claude-unset"]
    assert body["gpt-5"]["reasoning_effort"] == "high" and "temperature" not in body["gpt-5"]
    from orchestrator.seats.families import openai_effort
    assert openai_effort("openai/gpt-5.2", "off") == "none" and openai_effort("gpt-4.1", None) is None


@pytest.mark.parametrize("max_tokens,fits", [(500, False), (1024, False), (1279, False), (1280, True),
                                             (2000, True), (8192, True)])
def test_thinking_budget_fits_below_max_tokens_or_the_seat_is_refused(max_tokens, fits):
    from orchestrator.seats.families import request_problem, thinking_budget
    seat = {"model": "claude-sonnet-4-5", "reasoning": "high", "max_tokens": max_tokens}
    problem = request_problem("anthropic", seat, max_tokens)
    if not fits:
        assert "max_tokens of at least 1280" in problem
        with pytest.raises(ValueError):
            thinking_budget("high", max_tokens)
        return
    assert problem is None
    budget = thinking_budget("high", max_tokens)
    assert 1024 <= budget < max_tokens and budget <= 4096


async def _anthropic_request(fake, reasoning, max_tokens):
    async with new_client(private_ok=True) as client:
        chat = AnthropicChat("anthropic", model="claude-m", key="k-good", client=client, system="s",
                             base_url=fake.url, reasoning=reasoning, max_tokens=max_tokens)
        await chat.send([], "hello", __import__("asyncio").get_running_loop().time() + 5)
    return fake.bodies("claude-m")[-1]


def test_sized_thinking_budgets_are_taken_by_the_api(fake):
    body = run(_anthropic_request(fake, "high", 2000))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1744} and body["max_tokens"] == 2000


def test_seats_a_provider_would_refuse_are_named_with_the_fix():
    from orchestrator.seats.families import request_problem
    assert "drop temperature" in request_problem("anthropic", {"model": "c", "temperature": 0.5}, 1024)
    assert "always reasons" in request_problem("openai", {"model": "o3-mini", "reasoning": "off"}, 1024)
    assert "drop temperature" in request_problem("openai", {"model": "gpt-5", "temperature": 0.5}, 1024)
    assert request_problem("openai", {"model": "gpt-5.1", "temperature": 0.5}, 1024) is None
    assert request_problem("router", {"model": "openai/o3", "reasoning": "off", "temperature": 1}, 1024) is None


# -- what self-hosted OpenAI-compatible servers take (docs/SEATS.md) ------------------------------

SELF_HOSTED = {"model": "smollm2", "provider": "openai-compatible"}


def test_a_tools_seats_turns_after_a_tool_call_are_taken_by_self_hosted_servers(fake):
    # a tool call with no text: the next request resends it from memory, with a content every server takes
    fake.defaults["smollm2"] = {"calls": [("eat", {})]}
    _, players, _ = play(fake, {0: SELF_HOSTED}, 3)
    assert players[0].turns["answered"] == 3 and players[0].turns["provider_errors"] == 0
    second = fake.bodies("smollm2")[1]
    assistant = second["messages"][2]
    assert assistant["role"] == "assistant" and assistant["content"] == ""
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["eat"]
    assert second["messages"][3] == {"role": "tool", "tool_call_id": assistant["tool_calls"][0]["id"],
                                     "content": "played; its outcome is in your next observation"}
    # the double refuses what llama-cpp-python's server refuses: null, and no content at all
    null = json.loads(json.dumps(second))
    null["messages"][2]["content"] = None
    assert "must be a string" in check_openai(null, None)
    del null["messages"][2]["content"]
    assert "no content" in check_openai(null, None)


def test_requests_are_what_llama_cpp_pythons_server_takes(fake):
    # its own request model, where the realmodel extra is installed (make realmodel)
    types = pytest.importorskip("llama_cpp.server.types")
    from pydantic import ValidationError
    fake.defaults["smollm2"] = {"calls": [("move", {"direction": "north"}), ("eat", {})], "text": "plan"}
    fake.script("smollm2", {"calls": [("eat", {})]})
    play(fake, {0: SELF_HOSTED, 1: dict(SELF_HOSTED, model="smollm2-json", format="json")}, 3)
    bodies = fake.bodies()
    assert len(bodies) == 6
    for body in bodies:
        types.CreateChatCompletionRequest.model_validate(body)
    null = json.loads(json.dumps(fake.bodies("smollm2")[1]))
    null["messages"][2]["content"] = None
    with pytest.raises(ValidationError):
        types.CreateChatCompletionRequest.model_validate(null)


# -- replies built with the SDKs' response models ------------------------------------------------

ROUTER = {"model": "r/m", "provider": "router"}
CLAUDE = {"model": "claude-m", "provider": "anthropic"}


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_parallel_tool_calls_are_played_in_order(fake, seat):
    fake.script(seat["model"], {"calls": [("move", {"direction": "east"}), ("gather", {})]})
    match, _, _ = play(fake, {0: seat}, 1)
    assert [r["kind"] for r in rows_of(match, 0, tick=0)] == ["move", "gather"]


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_a_refusal_is_recorded_and_refused_by_name(fake, seat):
    fake.script(seat["model"], {"refusal": "I won't play a game about raiding. SECRET-SKILL"})
    match, players, _ = play(fake, {0: seat}, 1)
    turn = players[0].transcript[0]
    assert turn["refusal"] == "I won't play a game about raiding. SECRET-SKILL" and turn["truncated"] is False
    assert turn["refused"] == ["refusal: refusal"] and turn["error"] is None
    row = rows_of(match, 0, tick=0)
    assert [(r["kind"], r["text"]) for r in row] == [("invalid", "refusal")]  # the code, never the text
    assert players[0].turns["answered"] == 1 and players[0].turns["invalid"] == 1


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_a_reply_cut_at_its_ceiling_is_truncated_not_malformed(fake, seat):
    finish = "length" if seat is ROUTER else "max_tokens"
    fake.script(seat["model"], {"calls": [("move", '{"direc')], "finish": finish} if seat is ROUTER
                else {"text": '{"actions": [{"action": "mo', "finish": finish})
    match, players, _ = play(fake, {0: seat}, 1)
    turn = players[0].transcript[0]
    assert turn["truncated"] is True and turn["refused"] == ["truncated: truncated"]
    assert [(r["kind"], r["text"]) for r in rows_of(match, 0, tick=0)] == [("invalid", "truncated")]


def test_thinking_blocks_go_back_with_their_signature_next_turn(fake):
    fake.script("claude-m", {"thinking": [("Food first.", "sig-abc")], "redacted": ["enc-data"],
                             "calls": [("eat", {})]})
    play(fake, {0: dict(CLAUDE, reasoning="low", max_tokens=4096)}, 2)
    second = fake.bodies("claude-m")[1]["messages"]
    assistant = second[1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "Food first.", "signature": "sig-abc"}
    assert assistant[1] == {"type": "redacted_thinking", "data": "enc-data"}
    assert assistant[2]["type"] == "tool_use" and second[2]["content"][0]["type"] == "tool_result"


def test_cached_input_is_priced_at_the_cache_price(fake):
    fake.script("openai/gpt-4o", {"calls": [("eat", {})], "usage": (10_000, 100), "cached": 8_000})
    fake.script("claude-haiku-4-5", {"calls": [("eat", {})], "usage": (10_000, 100), "cached": 6_000,
                                     "cache_write": 3_000})
    _, players, _ = play(fake, {0: {"model": "openai/gpt-4o", "provider": "router"},
                                1: {"model": "claude-haiku-4-5", "provider": "anthropic"}}, 1)
    # gpt-4o: 2,000 at $2.50, 8,000 cached at $1.25, 100 out at $10 (per million)
    assert players[0].usage["usd"] == pytest.approx((2000 * 2.5 + 8000 * 1.25 + 100 * 10) / 1e6)
    assert players[0].usage["input_tokens"] == 10_000
    # haiku 4.5: 1,000 at $1, 6,000 read at $0.10, 3,000 written at $1.25, 100 out at $5
    assert players[1].usage["usd"] == pytest.approx((1000 * 1.0 + 6000 * 0.1 + 3000 * 1.25 + 100 * 5) / 1e6)
    assert players[1].usage["input_tokens"] == 10_000
    assert PriceTable.shipped().cache_prices("openai", "gpt-4o-2024-08-06") == (1.25, 2.5)


def test_a_routers_own_cost_wins(fake):
    fake.script("openai/gpt-4o", {"calls": [("eat", {})], "usage": (10_000, 100), "cost": 0.0123})
    _, players, _ = play(fake, {0: {"model": "openai/gpt-4o", "provider": "router"}}, 1)
    assert players[0].usage["usd"] == pytest.approx(0.0123)


def test_reply_fixtures_are_the_sdks_own_shapes():
    from openai.types.chat import ChatCompletion
    from anthropic.types import Message
    from tests.seats.fake_provider import anthropic_message, openai_completion

    done = ChatCompletion.model_validate(openai_completion({"refusal": "no", "finish": "length", "cached": 5}))
    assert done.choices[0].message.refusal == "no" and done.usage.prompt_tokens_details.cached_tokens == 5
    msg = Message.model_validate(anthropic_message({"thinking": [("t", "s")], "refusal": "no"}))
    assert msg.stop_reason == "refusal" and msg.content[0].signature == "s"
    assert json.loads(json.dumps(anthropic_message({"calls": [("eat", {})]})))["content"][0]["type"] == "tool_use"
