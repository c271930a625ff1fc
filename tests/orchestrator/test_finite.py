"""One rule for numbers from outside (orchestrator.finite): bodies, agent and model actions and provider
usage hold finite numbers within range and bounded nesting, checked in-process with Hypothesis over
arbitrary JSON (huge, tiny, negative, integral floats, 1e400 as text, deep nesting)."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator import finite
from orchestrator.errors import DomainError
from orchestrator.runs.agent_turns import read_actions
from orchestrator.runs.admission.body import CODES as RUN_CODES
from orchestrator.seats.actions import Refused, from_list
from orchestrator.seats.faults import Rejected
from orchestrator.seats.reply import MAX_CALL_TOKENS, Reply
from tests.json_numbers import JSON, NUMBERS, SCALARS

def nested(depth: int, leaf=1):
    v = leaf
    for _ in range(depth):
        v = {"a": v}
    return v


def storable(value) -> bool:
    """What every store and response can hold: strict JSON, read back the same."""
    text = json.dumps(value, allow_nan=False)
    return json.loads(text) == value


def test_unfit_finds_numbers_and_nesting_without_recursion():
    assert finite.unfit({"a": [1, 2.5, {"b": float("inf")}]}) == (("a", 2, "b"), finite.NOT_FINITE)
    assert finite.unfit({"x": 10 ** 30}) == (("x",), finite.OUT_OF_RANGE)
    assert finite.unfit(nested(32)) is None and finite.unfit(nested(33))[1].startswith("nests deeper than 32")
    assert finite.unfit(nested(100_000)) is not None  # far past the interpreter's stack: no RecursionError
    assert finite.unfit([True, None, "Infinity", 1e308, -5e-324]) is None


def test_nulled_reads_stored_infinity_as_null_and_says_where():
    value, paths = finite.loads('{"usage": {"usd": Infinity, "input_tokens": 3}, "x": [NaN, 1]}')
    assert value == {"usage": {"usd": None, "input_tokens": 3}, "x": [None, 1]}
    assert paths == ["usage.usd", "x[0]"] and "usage.usd, x[0]" in finite.note(paths)
    assert finite.loads('{"a": 1}') == ({"a": 1}, []) and finite.note([]) is None


@pytest.mark.parametrize("field,value,code", [
    ("season_ticks", 300.0, "bad_season_ticks"), ("trials", 2.0, "bad_trials"),
    ("season_ticks", 1e400, "bad_season_ticks"), ("max_spend_usd", 1e400, "bad_spend_cap"),
    ("budget_usd", -1e400, "bad_spend_cap"), ("env", nested(40), "bad_env")])
def test_a_run_body_refuses_integral_floats_infinity_and_nesting_with_the_field_code(field, value, code):
    from orchestrator.runs.admission.body import check_run_body
    with pytest.raises(DomainError) as e:
        check_run_body({"scenario_id": "svc:custom-base-v1", "roster": [{"model": "local/random"}], field: value})
    assert e.value.code == RUN_CODES.get(field, code) == code, e.value


def test_agent_actions_are_bounded_field_by_field():
    with pytest.raises(DomainError) as e:
        read_actions({"tick": 0, "actions": [{"action": "move", "direction": "north", "steps": 1e400}]}, 2)
    assert e.value.code == "bad_actions" and "actions[0].steps" in str(e.value)
    with pytest.raises(DomainError) as e:
        read_actions({"tick": 0, "actions": [{"action": "say", "message": nested(3, "hi")}]}, 2)
    assert e.value.code == "bad_actions" and "nests deeper than 3" in str(e.value)
    assert read_actions({"tick": 0, "actions": [{"action": "say", "message": "x" * 60_000}]}, 2)  # the engine cuts it
    with pytest.raises(DomainError) as e:
        read_actions({"tick": 0.0, "actions": []}, 2)
    assert e.value.code == "bad_request" and "tick: should be an integer" in str(e.value)
    assert read_actions({"tick": 3, "actions": [{"action": "move", "direction": "north", "steps": 2.5}]}, 2)


def test_a_model_action_past_the_bounds_is_refused_not_played():
    played = from_list([{"action": "move", "direction": "north", "steps": float("inf")},
                        {"action": "say", "message": nested(5, "x")}, {"action": "gather"}])
    assert [type(a) for a in played] == [Refused, Refused, dict]
    assert played[0].reason == "bad_arguments" and "steps should be a finite number" in played[0].detail


@pytest.mark.parametrize("usage", [{"input_tokens": 1e999}, {"output_tokens": -3}, {"cost_usd": 1e999},
                                   {"cost_usd": -0.5}, {"input_tokens": MAX_CALL_TOKENS + 1},
                                   {"cache_write_tokens": float("nan")}, {"cost_usd": 10 ** 400}])
def test_a_reply_with_usage_past_its_range_is_a_rejected_answer(usage):
    with pytest.raises(Rejected) as e:
        Reply(**usage)
    assert e.value.code == "provider_rejected"


def test_a_reply_reads_absent_usage_as_zero():
    r = Reply(input_tokens=None, output_tokens="12", cost_usd=None)
    assert (r.input_tokens, r.output_tokens, r.cost_usd) == (0, 0, None)
    assert (Reply(input_tokens=12.0, cost_usd=0.25).input_tokens, Reply(cost_usd=0.25).cost_usd) == (12, 0.25)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(action=st.dictionaries(st.text(max_size=6), JSON, max_size=4), tick=NUMBERS)
def test_property_an_agent_submission_is_refused_or_storable(action, tick):
    body = {"tick": tick, "actions": [{"action": "move", **action}]}
    try:
        got = read_actions(json.loads(json.dumps(body)), 5)
    except DomainError as e:
        assert e.code in ("bad_request", "bad_actions")
        return
    assert type(tick) is int and 0 <= tick <= finite.INT_RANGE  # no integral float, no overflow
    assert storable(got) and finite.unfit(got) is None
    played = from_list(got["actions"])
    assert all(isinstance(a, Refused) or storable(a) for a in played)


@settings(max_examples=1000, deadline=None)
@given(usage=st.fixed_dictionaries({}, optional={k: st.one_of(NUMBERS, SCALARS) for k in (
    "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "cost_usd")}))
def test_property_a_reply_is_rejected_or_holds_finite_usage(usage):
    try:
        r = Reply(**usage)
    except Rejected:
        return
    figures = [r.input_tokens, r.output_tokens, r.cached_tokens, r.cache_write_tokens]
    assert all(type(x) is int and 0 <= x <= MAX_CALL_TOKENS for x in figures)
    assert r.cost_usd is None or (math.isfinite(r.cost_usd) and r.cost_usd >= 0)
