"""Provider faults (docs/SEATS.md): every one counted and written to the transcript,
and three faulted ticks in a row on one seat fail the run naming seat, provider and cause."""
import json
import time

import pytest

from orchestrator.seats import SeatPlayer, play_tick
from orchestrator.seats.faults import SeatFailed
from tests.api.util import free_port
from tests.seats.conftest import external_match, players_for, rows_of, run, with_client

ROUTER = {"model": "r/m", "provider": "router"}
CLAUDE = {"model": "claude-m", "provider": "anthropic"}
GOOD = {"model": "r/ok", "provider": "router"}


def season(fake, seats: dict, ticks: int, **kw):
    """Play up to `ticks` ticks; returns (match, players, reports, the exception that ended it or None)."""
    match = external_match(len(seats), ticks=ticks + 2)
    out = {}

    async def go(client):
        out["players"] = players_for(fake, client, seats, **kw)
        out["reports"] = []
        try:
            for _ in range(ticks):
                out["reports"].append(await play_tick(match, out["players"]))
        except SeatFailed as e:  # FAULT_TICKS faulted ticks in a row: SeatFaulted
            return e
        return None

    error = run(with_client(go))
    return match, out["players"], out["reports"], error


@pytest.mark.parametrize("seat", [ROUTER, CLAUDE], ids=["openai", "anthropic"])
def test_a_hanging_provider_is_counted_and_fails_the_run_on_the_third_tick(fake, seat):
    fake.defaults[seat["model"]] = {"calls": [("wait", {})], "delay_ms": 30_000}
    t0 = time.perf_counter()
    match, players, reports, error = season(fake, {0: seat, 1: GOOD}, 10, timeout_ms=300)
    assert time.perf_counter() - t0 < 5
    assert isinstance(error, SeatFailed) and error.code == "provider_timeout"
    assert error.envelope()["error"] == "provider_timeout"
    message = error.envelope()["message"]
    assert message.startswith(f"roster[0] (model {seat['model']}): the {seat['provider']} provider did not answer")
    assert "3 ticks in a row" in message
    p = players[0]
    assert p.turns["timed_out"] == 3 and p.turns["answered"] == 0 and p.turns["provider_errors"] == 0
    # every turn asked has its row, with what happened
    assert [t["tick"] for t in p.transcript] == [0, 1, 2]
    assert all(t["error"] and "did not answer" in t["error"] and t["latency_ms"] >= 250 for t in p.transcript)
    # two ticks played as timeout waits; the third was not submitted
    assert match.tick == 2 and [r.waits for r in reports] == [{0: "timeout"}] * 2
    assert [(r["kind"], r["a"]) for r in rows_of(match, 0, tick=0)] == [("wait", 1)]
    assert players[1].turns["answered"] == 3


REJECTIONS = [
    ("http_400", {"status": 400, "body": json.dumps({"error": {"type": "invalid_request_error",
                                                                "message": "max_tokens: too large for model"}})},
     "HTTP 400: max_tokens: too large for model"),
    ("not_json", {"body": "<html>gateway says hello</html>"}, "not JSON"),
    ("error_object", {"body": json.dumps({"error": {"code": 502, "message": "upstream provider returned error"}})},
     "upstream provider returned error"),
    ("no_choices", {"body": json.dumps({"id": "x", "object": "chat.completion", "choices": []})},
     "not a chat completion"),
]


@pytest.mark.parametrize("step,cause", [(s, c) for _, s, c in REJECTIONS], ids=[i for i, _, _ in REJECTIONS])
def test_rejected_or_garbled_calls_are_provider_errors_and_fail_the_run(fake, step, cause):
    fake.defaults["r/m"] = step
    match, players, reports, error = season(fake, {0: ROUTER}, 10)
    assert error is not None and error.code == "provider_rejected"
    assert "roster[0] (model r/m): the router provider" in str(error) and cause in str(error)
    p = players[0]
    assert p.turns["provider_errors"] == 3 and p.turns["answered"] == 0 and p.turns["invalid"] == 0
    assert len(fake.bodies("r/m")) == 3  # a 4xx is not retried
    assert all(cause in t["error"] for t in p.transcript) and match.tick == 2
    assert [r.waits for r in reports] == [{0: "no_reply"}] * 2


def test_anthropic_error_bodies_are_rejected_with_the_providers_message(fake):
    fake.defaults["claude-m"] = {"status": 400, "body": json.dumps(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "thinking.budget_tokens: too big"}})}
    _, players, _, error = season(fake, {0: CLAUDE}, 5)
    assert error.code == "provider_rejected" and "thinking.budget_tokens: too big" in str(error)


def test_an_overloaded_provider_is_unreachable_after_the_retries(fake):
    fake.defaults["r/m"] = {"status": 529, "headers": {"retry-after": "0.05"}}
    _, players, _, error = season(fake, {0: ROUTER}, 5, timeout_ms=400)
    assert error.code == "provider_unreachable" and "HTTP 529" in str(error)
    assert players[0].turns["provider_errors"] == 3 and players[0].turns["retries"] >= 3


def test_a_provider_that_answered_5xx_is_named_as_answering_with_its_status_and_body(fake):
    # llama-cpp-python's answer to a request its types refuse: a 500 with the same body every time
    body = json.dumps({"error": {"message": "7 validation errors:\n  {'type': 'literal_error', 'loc': "
                                            "('body', 'messages', 2)}", "type": "internal_server_error"}})
    fake.defaults["r/m"] = {"status": 500, "body": body}
    t0 = time.perf_counter()
    _, players, _, error = season(fake, {0: ROUTER}, 5, timeout_ms=20_000)
    assert error.code == "provider_unreachable"
    message = error.envelope()["message"]
    assert "the router provider answered HTTP 500 to every call for 3 ticks in a row" in message
    assert "could not be reached" not in message
    assert "HTTP 500: 7 validation errors: {'type': 'literal_error'" in message  # its body, on one line
    # the same answer three times ends the turn's retries: three calls a tick, not a 20 s turn of them
    assert len(fake.bodies("r/m")) == 9 and time.perf_counter() - t0 < 10
    p = players[0]
    assert p.turns["provider_errors"] == 3 and p.turns["retries"] == 6
    assert all("the same answer 3 times in a row" in t["error"] for t in p.transcript)


def test_a_5xx_that_changes_or_says_try_later_is_retried_while_the_turn_lasts(fake):
    fake.script("r/m", *({"status": 500, "body": json.dumps({"error": {"message": f"worker {k} crashed"}})}
                         for k in range(4)))
    fake.script("r/ok", *[{"status": 503}] * 4)
    _, players, _, error = season(fake, {0: ROUTER, 1: GOOD}, 1, timeout_ms=10_000)
    assert error is None
    assert [p.turns["answered"] for p in players.values()] == [1, 1]
    assert [p.turns["retries"] for p in players.values()] == [4, 4]


def test_a_retry_the_deadline_cuts_short_keeps_the_fault_the_provider_answered_with(fake):
    # a 503, then the retry hangs past the turn: the provider answered, with an error, so the turn is
    # that fault (counted as a provider error, named by its status), not a slow provider
    fake.script("r/m", {"status": 503, "headers": {"retry-after": "0.05"}},
                {"calls": [("wait", {})], "delay_ms": 30_000})
    _, players, reports, _ = season(fake, {0: ROUTER}, 1, timeout_ms=500)
    p = players[0]
    assert p.turns["provider_errors"] == 1 and p.turns["timed_out"] == 0 and p.turns["retries"] == 1
    assert "HTTP 503" in p.transcript[0]["error"] and "ran out while retrying" in p.transcript[0]["error"]
    assert reports[0].waits == {0: "no_reply"}


def test_a_provider_nobody_answers_for_is_unreachable():
    async def go(client):
        p = SeatPlayer(0, ROUTER, key="k", client=client, base_url=f"http://127.0.0.1:{free_port()}/v1",
                       turn_timeout_ms=300)
        match = external_match(1, ticks=6)
        with pytest.raises(SeatFailed) as e:
            for _ in range(5):
                await play_tick(match, {0: p})
        return p, e.value, match

    p, e, match = run(with_client(go))
    assert e.code == "provider_unreachable" and "ConnectError" in str(e) and match.tick == 2
    assert "could not be reached for 3 ticks" in str(e)
    assert p.turns["provider_errors"] == 3


def test_429_with_retry_after_is_honoured_and_a_usable_reply_ends_the_streak(fake):
    fake.script("r/m", {"status": 400}, {"status": 400},
                {"status": 429, "headers": {"retry-after": "0.3"}}, {"calls": [("eat", {})]},
                {"status": 400}, {"status": 400}, {"calls": [("eat", {})]})
    match, players, reports, error = season(fake, {0: ROUTER}, 6)
    assert error is None and match.tick == 6
    p = players[0]
    assert p.turns == {"answered": 2, "invalid": 0, "timed_out": 0, "provider_errors": 4, "retries": 1}
    stamps = [r["at"] for r in fake.requests]
    assert stamps[3] - stamps[2] >= 0.28  # waited what the provider asked


def test_a_refusal_or_a_cut_reply_is_the_models_answer_not_a_fault(fake):
    fake.defaults["r/m"] = {"refusal": "I can't help with that."}
    _, players, _, error = season(fake, {0: ROUTER}, 4)
    assert error is None and players[0].turns["answered"] == 4 and players[0].turns["invalid"] == 4
