"""Every bound of the OpenAPI document at its edges: accepted at the bound, refused past it with the
field's own code (docs/api.md). Wrong JSON types are refused, never coerced."""
from __future__ import annotations

import pytest
from tests.api.util import bearer

SEED_MAX = 2**53 - 1  # RFC 8785's integer domain; see engine/rules.py
POLICIES = ["honest-trader", "greedy-harvester", "aggressive-raider", "random"]


def with_env(env):
    return {"name": "bounds", "env": env}


ACCEPTED = [
    {"name": "ab"}, {"name": "x" * 60}, {"name": "é" * 60},
    {"name": "ok", "description": ""}, {"name": "ok", "description": "d" * 300}, {"name": "ok", "description": None},
    {"name": "ok", "season_ticks": 10}, {"name": "ok", "season_ticks": 2000}, {"name": "ok", "season_ticks": None},
    with_env({}),
    with_env({"seed": 0}), with_env({"seed": SEED_MAX}), with_env({"spawn_seed": 0}), with_env({"spawn_seed": SEED_MAX}),
    with_env({"turn_timeout_ms": 5000}), with_env({"turn_timeout_ms": 300000}),
    with_env({"actions_per_turn": 1}), with_env({"actions_per_turn": 5}),
    with_env({"resources": {}}), with_env({"resources": {"wood": {}}}),
    with_env({"resources": {r: {"max": 0, "regen": 10} for r in ("wood", "stone", "food", "ore", "relics")}}),
    with_env({"resources": {"food": {"max": 10.0, "regen": 0.0}}}), with_env({"resources": {"ore": {"regen": 0.25}}}),
    with_env({"anchors": []}), with_env({"anchors": POLICIES * 2}), with_env({"anchors": ["random"] * 8}),
    with_env({"anchors": ["anchors-v1"]}),
]

REFUSED = [
    ({}, "bad_request"), ({"description": "no name"}, "bad_request"), ({"name": "ok", "extra": 1}, "bad_request"),
    ({"name": "a"}, "bad_scenario"), ({"name": "x" * 61}, "bad_scenario"), ({"name": 12}, "bad_scenario"),
    ({"name": None}, "bad_scenario"), ({"name": ["ab"]}, "bad_scenario"),
    ({"name": "ok", "description": "d" * 301}, "bad_scenario"), ({"name": "ok", "description": 5}, "bad_scenario"),
    ({"name": "ok", "season_ticks": 9}, "bad_season_ticks"), ({"name": "ok", "season_ticks": 2001}, "bad_season_ticks"),
    ({"name": "ok", "season_ticks": True}, "bad_season_ticks"), ({"name": "ok", "season_ticks": 300.5}, "bad_season_ticks"),
    ({"name": "ok", "season_ticks": 300.5}, "bad_season_ticks"), ({"name": "ok", "season_ticks": "300"}, "bad_season_ticks"),
    ({"name": "ok", "env": None}, "bad_env"), ({"name": "ok", "env": []}, "bad_env"), ({"name": "ok", "env": "x"}, "bad_env"),
    (with_env({"weather": 1}), "bad_env"),
    (with_env({"seed": -1}), "bad_env"), (with_env({"seed": SEED_MAX + 1}), "bad_env"), (with_env({"seed": 1.5}), "bad_env"),
    (with_env({"seed": True}), "bad_env"), (with_env({"seed": "1"}), "bad_env"), (with_env({"seed": None}), "bad_env"),
    (with_env({"spawn_seed": -1}), "bad_env"), (with_env({"spawn_seed": SEED_MAX + 1}), "bad_env"),
    (with_env({"turn_timeout_ms": 4999}), "bad_env"), (with_env({"turn_timeout_ms": 300001}), "bad_env"),
    (with_env({"turn_timeout_ms": 5000.5}), "bad_env"),
    (with_env({"actions_per_turn": 0}), "bad_env"), (with_env({"actions_per_turn": 6}), "bad_env"),
    (with_env({"actions_per_turn": False}), "bad_env"),
    (with_env({"resources": {"gold": {"max": 1}}}), "bad_env"), (with_env({"resources": {"wood": {"size": 1}}}), "bad_env"),
    (with_env({"resources": {"wood": {"max": -0.01}}}), "bad_env"), (with_env({"resources": {"wood": {"max": 10.01}}}), "bad_env"),
    (with_env({"resources": {"wood": {"regen": 11}}}), "bad_env"), (with_env({"resources": {"wood": {"max": "1"}}}), "bad_env"),
    (with_env({"resources": {"wood": {"max": True}}}), "bad_env"), (with_env({"resources": {"wood": 1}}), "bad_env"),
    (with_env({"resources": {"wood": None}}), "bad_env"), (with_env({"resources": []}), "bad_env"),
    (with_env({"anchors": ["random"] * 9}), "bad_env"), (with_env({"anchors": POLICIES * 2 + ["random"]}), "bad_env"),
    (with_env({"anchors": ["anchors-v1", "random"]}), "bad_env"), (with_env({"anchors": ["anchors-v1"] * 2}), "bad_env"),
    (with_env({"anchors": ["nobody"]}), "bad_env"), (with_env({"anchors": "random"}), "bad_env"),
    (with_env({"anchors": [1]}), "bad_env"), (with_env({"anchors": None}), "bad_env"),
]


@pytest.mark.parametrize("body", ACCEPTED, ids=lambda b: str(b)[:70])
def test_scenario_fields_accepted_at_their_bounds(client, lab_token, body):
    r = client.post("/api/v1/scenarios/validate", json=body, headers=bearer(lab_token))
    assert r.status_code == 200, r.text
    assert r.json()["valid"] is True
    assert r.json()["scenario"]["env"] == body.get("env", {})  # env kept exactly as given


@pytest.mark.parametrize("body,code", REFUSED, ids=lambda b: str(b)[:70])
def test_scenario_fields_refused_past_their_bounds(client, lab_token, body, code):
    r = client.post("/api/v1/scenarios/validate", json=body, headers=bearer(lab_token))
    assert r.status_code == 400, r.text
    assert r.json()["error"] == code
    assert r.json()["message"]


def test_create_and_update_refuse_with_the_same_codes(client, lab_token):
    h = bearer(lab_token)
    for body, code in REFUSED[:12:3] + REFUSED[-5:]:
        r = client.post("/api/v1/scenarios", json=body, headers=h)
        assert (r.status_code, r.json()["error"]) == (400, code), body
    sid = client.post("/api/v1/scenarios", json={"name": "to update"}, headers=h).json()["scenario"]["id"]
    for patch, code in [({"name": "a"}, "bad_scenario"), ({"name": None}, "bad_scenario"),
                        ({"season_ticks": 2001}, "bad_season_ticks"), ({"env": {"seed": -1}}, "bad_env"),
                        ({"env": None}, "bad_env"), ({"colour": "red"}, "bad_request"), ([], "bad_request")]:
        r = client.put(f"/api/v1/scenarios/{sid}", json=patch, headers=h)
        assert (r.status_code, r.json()["error"]) == (400, code), patch


def test_messages_name_the_field_and_what_to_send(client, lab_token):
    h = bearer(lab_token)
    msg = client.post("/api/v1/scenarios/validate", json=with_env({"resources": {"wood": {"max": 11}}}),
                      headers=h).json()["message"]
    assert "env.resources.wood.max" in msg and "0 to 10" in msg
    msg = client.post("/api/v1/scenarios/validate", json={"name": "ok", "season_ticks": 2001}, headers=h).json()["message"]
    assert "season_ticks" in msg and "10 to 2000" in msg
    msg = client.post("/api/v1/scenarios/validate", json={"name": "ok", "extra": 1}, headers=h).json()["message"]
    assert "extra" in msg
    msg = client.post("/api/v1/scenarios/validate", json={}, headers=h).json()["message"]
    assert "name" in msg


def test_field_bounds_come_before_plan_ceilings(client, make_account):
    token = make_account("free").token()
    r = client.post("/api/v1/scenarios/validate", json={"name": "long", "season_ticks": 2001}, headers=bearer(token))
    assert (r.status_code, r.json()["error"]) == (400, "bad_season_ticks")
    r = client.post("/api/v1/scenarios/validate", json={"name": "long", "season_ticks": 301}, headers=bearer(token))
    assert r.status_code == 200
    assert [w["code"] for w in r.json()["receipt"]["warnings"]] == ["plan_ticks"]


SKILL_ACCEPTED = [{"name": "ab", "text": "t" * 10}, {"name": "n" * 60, "text": "t" * 2000}]
SKILL_REFUSED = [
    ({"name": "a", "text": "t" * 10}, "bad_skill"), ({"name": "n" * 61, "text": "t" * 10}, "bad_skill"),
    ({"name": "ab", "text": "t" * 9}, "bad_skill"), ({"name": "ab", "text": "t" * 2001}, "bad_skill"),
    ({"name": 5, "text": "t" * 10}, "bad_skill"), ({"name": "ab", "text": ["t" * 10]}, "bad_skill"),
    ({"name": None, "text": "t" * 10}, "bad_skill"),
    ({"name": "ab"}, "bad_request"), ({"text": "t" * 10}, "bad_request"),
    ({"name": "ab", "text": "t" * 10, "game": "world"}, "bad_request"), ("skill", "bad_request"),
]


@pytest.mark.parametrize("body", SKILL_ACCEPTED, ids=["min", "max"])
def test_skill_fields_accepted_at_their_bounds(client, lab_token, body):
    h = bearer(lab_token)
    r = client.post("/api/v1/skills", json=body, headers=h)
    assert r.status_code == 201, r.text
    skill = r.json()["skill"]
    assert (skill["name"], skill["text"]) == (body["name"], body["text"])
    r = client.put(f"/api/v1/skills/{skill['id']}", json=body, headers=h)
    assert r.status_code == 200


@pytest.mark.parametrize("body,code", SKILL_REFUSED, ids=lambda b: str(b)[:50])
def test_skill_fields_refused_past_their_bounds(client, lab_token, body, code):
    r = client.post("/api/v1/skills", json=body, headers=bearer(lab_token))
    assert (r.status_code, r.json()["error"]) == (400, code), r.text


def test_skill_update_refuses_bad_fields(client, lab_token):
    h = bearer(lab_token)
    sid = client.post("/api/v1/skills", json=SKILL_ACCEPTED[0], headers=h).json()["skill"]["id"]
    for patch, code in [({"name": "a"}, "bad_skill"), ({"text": "short"}, "bad_skill"), ({"name": None}, "bad_skill"),
                        ({"text": 5}, "bad_skill"), ({"id": "usk_x"}, "bad_request"), (None, "bad_request")]:
        r = client.put(f"/api/v1/skills/{sid}", json=patch, headers=h)
        assert (r.status_code, r.json()["error"]) == (400, code), patch
