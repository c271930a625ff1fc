"""Scenarios: validate, idempotent create, content hash, allowance, list order, update and delete."""
from __future__ import annotations

import jsonschema
import rfc8785
import hashlib
from tests.api.util import bearer

from engine import anchors as engine_anchors
from engine import library
from engine.hashing import BASE_ID
from engine.rules import RESOURCES

BODY = {"name": "Winter", "description": "cold", "season_ticks": 400,
        "env": {"seed": 11, "resources": {"food": {"max": 0.5}}, "anchors": ["anchors-v1"]}}


def recompute(view: dict) -> str:
    """docs/api.md, by hand: anyone can recompute the hash from a scenario view."""
    doc = {"base": view["base"], "season_ticks": view["season_ticks"], "env": view["env"]}
    return hashlib.sha256(rfc8785.dumps(doc)).hexdigest()[:16]


def test_validate_returns_normalized_definition_hash_and_receipt(client, lab_token):
    r = client.post("/api/v1/scenarios/validate", json={"name": "Bare"}, headers=bearer(lab_token))
    assert r.status_code == 200
    d = r.json()
    assert d["valid"] is True and d["base"] == BASE_ID
    assert d["scenario"] == {"name": "Bare", "description": "", "season_ticks": 300, "env": {}}
    assert d["hash"] == recompute({**d["scenario"], "base": BASE_ID})
    assert d["receipt"] == {"plan": {"id": "lab", "name": "Lab", "ticks_per_run": 2000, "seats_per_run": 16,
                                     "saved_scenarios": 500}, "warnings": []}


def test_validate_persists_nothing(client, make_account):
    token = make_account("pro").token()
    client.post("/api/v1/scenarios/validate", json=BODY, headers=bearer(token))
    assert client.get("/api/v1/scenarios", headers=bearer(token)).json() == {"scenarios": []}


def test_receipt_warnings_plan_ticks_and_fixed_layout(client, make_account):
    token = make_account("starter").token()
    body = {"name": "Pinned", "season_ticks": 601, "env": {"seed": 1, "spawn_seed": 2}}
    r = client.post("/api/v1/scenarios/validate", json=body, headers=bearer(token))
    warnings = r.json()["receipt"]["warnings"]
    assert [w["code"] for w in warnings] == ["plan_ticks", "fixed_layout"]
    assert "600" in warnings[0]["message"]
    # warnings never block saving
    r = client.post("/api/v1/scenarios", json=body, headers=bearer(token))
    assert r.status_code == 201
    assert [w["code"] for w in r.json()["receipt"]["warnings"]] == ["plan_ticks", "fixed_layout"]
    at_ceiling = client.post("/api/v1/scenarios/validate", json={"name": "Edge", "season_ticks": 600,
                                                                 "env": {"seed": 1}}, headers=bearer(token))
    assert at_ceiling.json()["receipt"]["warnings"] == []


def test_create_is_idempotent_on_name_and_hash(client, make_account):
    token = make_account("pro").token()
    first = client.post("/api/v1/scenarios", json=BODY, headers=bearer(token))
    assert first.status_code == 201
    assert first.json()["ok"] is True and first.json()["created"] is True
    view = first.json()["scenario"]
    assert view["id"].startswith("usc_") and view["base"] == BASE_ID and view["updated_at_ms"] is None
    again = client.post("/api/v1/scenarios", json=BODY, headers=bearer(token))
    assert again.status_code == 200
    assert again.json()["created"] is False and again.json()["scenario"] == view
    # the description is not part of the hash: same name + same content is still the same scenario
    again = client.post("/api/v1/scenarios", json={**BODY, "description": "other"}, headers=bearer(token))
    assert again.status_code == 200 and again.json()["scenario"]["id"] == view["id"]
    # a different name with identical content is a new scenario with the same hash
    other = client.post("/api/v1/scenarios", json={**BODY, "name": "Winter 2"}, headers=bearer(token))
    assert other.status_code == 201
    assert other.json()["scenario"]["hash"] == view["hash"] and other.json()["scenario"]["id"] != view["id"]
    assert len(client.get("/api/v1/scenarios", headers=bearer(token)).json()["scenarios"]) == 2


def test_hash_is_recomputable_and_null_ticks_mean_300(client, lab_token):
    h = bearer(lab_token)
    view = client.post("/api/v1/scenarios", json=BODY, headers=h).json()["scenario"]
    assert view["hash"] == recompute(view) and len(view["hash"]) == 16
    a = client.post("/api/v1/scenarios/validate", json={"name": "x1", "season_ticks": None}, headers=h).json()
    b = client.post("/api/v1/scenarios/validate", json={"name": "x2", "season_ticks": 300}, headers=h).json()
    c = client.post("/api/v1/scenarios/validate", json={"name": "x3"}, headers=h).json()
    assert a["hash"] == b["hash"] == c["hash"]
    # the empty base definition hashes like the library's base world entry
    assert c["hash"] == library.entry(BASE_ID)["hash"]


def test_hash_stable_under_rename_and_changed_by_content(client, lab_token):
    h = bearer(lab_token)
    view = client.post("/api/v1/scenarios", json={**BODY, "name": "Stable"}, headers=h).json()["scenario"]
    renamed = client.put(f"/api/v1/scenarios/{view['id']}", json={"name": "Renamed", "description": "new"},
                         headers=h).json()["scenario"]
    assert renamed["hash"] == view["hash"]
    ticks = client.put(f"/api/v1/scenarios/{view['id']}", json={"season_ticks": 401}, headers=h).json()["scenario"]
    assert ticks["hash"] != view["hash"] and ticks["hash"] == recompute(ticks)
    env = client.put(f"/api/v1/scenarios/{view['id']}", json={"season_ticks": 400, "env": {**BODY["env"], "seed": 12}},
                     headers=h).json()["scenario"]
    assert env["hash"] not in (view["hash"], ticks["hash"]) and env["hash"] == recompute(env)
    back = client.put(f"/api/v1/scenarios/{view['id']}", json={"env": BODY["env"]}, headers=h).json()["scenario"]
    assert back["hash"] == view["hash"]


def test_hash_follows_the_env_exactly_as_given(client, lab_token):
    h = bearer(lab_token)
    explicit = client.post("/api/v1/scenarios/validate", json={"name": "ee", "env": {"actions_per_turn": 2}},
                           headers=h).json()
    implicit = client.post("/api/v1/scenarios/validate", json={"name": "ee"}, headers=h).json()
    assert explicit["hash"] != implicit["hash"]  # no defaults filled in before hashing
    one = client.post("/api/v1/scenarios/validate", json={"name": "ee", "env": {"resources": {"food": {"max": 1}}}},
                      headers=h).json()
    one_f = client.post("/api/v1/scenarios/validate", json={"name": "ee", "env": {"resources": {"food": {"max": 1.0}}}},
                        headers=h).json()
    assert one["hash"] == one_f["hash"]  # RFC 8785 writes 1.0 as 1


def test_update_semantics(client, lab_token):
    h = bearer(lab_token)
    view = client.post("/api/v1/scenarios", json={**BODY, "name": "Updatable"}, headers=h).json()["scenario"]
    r = client.put(f"/api/v1/scenarios/{view['id']}", json={"description": "warmer"}, headers=h)
    assert r.status_code == 200
    updated = r.json()["scenario"]
    assert updated["description"] == "warmer"
    for kept in ("id", "name", "season_ticks", "env", "hash", "created_at_ms", "base"):
        assert updated[kept] == view[kept], kept
    assert updated["updated_at_ms"] >= updated["created_at_ms"]
    # a given env replaces the whole env; null season_ticks and description reset to the defaults
    r = client.put(f"/api/v1/scenarios/{view['id']}", json={"env": {"seed": 5}, "season_ticks": None,
                                                            "description": None}, headers=h)
    updated = r.json()["scenario"]
    assert updated["env"] == {"seed": 5} and updated["season_ticks"] == 300 and updated["description"] == ""
    assert client.get(f"/api/v1/scenarios/{view['id']}", headers=h).json()["scenario"] == updated
    assert client.put(f"/api/v1/scenarios/{view['id']}", json={}, headers=h).status_code == 200


def test_list_is_newest_first_and_updates_do_not_reorder(client, make_account):
    token = make_account("pro").token()
    ids = [client.post("/api/v1/scenarios", json={"name": f"n{i}"}, headers=bearer(token)).json()["scenario"]["id"]
           for i in range(4)]
    client.put(f"/api/v1/scenarios/{ids[0]}", json={"name": "oldest, renamed"}, headers=bearer(token))
    listed = [s["id"] for s in client.get("/api/v1/scenarios", headers=bearer(token)).json()["scenarios"]]
    assert listed == ids[::-1]


def test_allowance_full_refuses_create_but_not_validate_or_idempotent_create(client, make_account):
    token = make_account("free").token()  # free: 5 saved scenarios, read-only API
    r = client.post("/api/v1/scenarios", json={"name": "nope"}, headers=bearer(token))
    assert r.json()["error"] == "plan_api"
    acct = make_account("starter")  # 20 saved scenarios
    token = acct.token()
    h = bearer(token)
    ids = [client.post("/api/v1/scenarios", json={"name": f"s{i}"}, headers=h).json()["scenario"]["id"]
           for i in range(20)]
    r = client.post("/api/v1/scenarios", json={"name": "one too many"}, headers=h)
    assert (r.status_code, r.json()["error"]) == (400, "too_many_scenarios")
    assert "20" in r.json()["message"]
    assert client.post("/api/v1/scenarios/validate", json={"name": "still fine"}, headers=h).status_code == 200
    assert client.post("/api/v1/scenarios", json={"name": "s3"}, headers=h).status_code == 200  # existing one
    # delete frees a slot
    r = client.delete(f"/api/v1/scenarios/{ids[0]}", headers=h)
    assert r.status_code == 200 and r.json() == {"ok": True, "deleted": ids[0]}
    assert client.post("/api/v1/scenarios", json={"name": "one too many"}, headers=h).status_code == 201


def test_delete_then_unknown(client, lab_token):
    h = bearer(lab_token)
    sid = client.post("/api/v1/scenarios", json={"name": "Doomed"}, headers=h).json()["scenario"]["id"]
    assert client.delete(f"/api/v1/scenarios/{sid}", headers=h).status_code == 200
    for method in ("GET", "DELETE", "PUT"):
        r = client.request(method, f"/api/v1/scenarios/{sid}", json={"name": "back"} if method == "PUT" else None,
                           headers=h)
        assert (r.status_code, r.json()["error"]) == (404, "unknown_scenario")
    r = client.get("/api/v1/scenarios/svc:custom-base-v1", headers=h)
    assert (r.status_code, r.json()["error"]) == (404, "unknown_scenario")


def test_schema_is_draft_2020_12_with_live_ids_and_valid_examples(client, lab_token):
    h = bearer(lab_token)
    schema = client.get("/api/v1/scenarios/schema", headers=h).json()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for key in ("$id", "title", "type", "properties", "examples"):
        assert key in schema
    assert schema["required"] == ["name"]
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    env = schema["$defs"]["Env"]["properties"]
    assert sorted(schema["$defs"]["Resources"]["properties"]) == sorted(RESOURCES)
    listed_anchor_ids = {i for branch in env["anchors"]["anyOf"] for i in branch["items"]["enum"]}
    assert listed_anchor_ids == set(engine_anchors.all_ids())
    for example in schema["examples"]:
        validator.validate(example)
        assert client.post("/api/v1/scenarios/validate", json=example, headers=h).status_code == 200
    # the schema and the service agree on what is refused
    for bad in ({"name": "ok", "season_ticks": 2001}, {"name": "ok", "env": {"anchors": ["anchors-v1", "random"]}},
                {"name": "ok", "env": {"seed": -1}}, {"name": "ok", "other": 1}):
        assert not validator.is_valid(bad)
        assert client.post("/api/v1/scenarios/validate", json=bad, headers=h).status_code == 400


def test_library_and_anchors(client, lab_token):
    h = bearer(lab_token)
    lib = client.get("/api/v1/library/scenarios", headers=h).json()
    assert lib == {"scenarios": library.entries()}
    ids = [s["id"] for s in lib["scenarios"]]
    assert BASE_ID in ids and all(i.startswith("svc:") for i in ids)
    anchors = client.get("/api/v1/library/anchors", headers=h).json()
    assert anchors == engine_anchors.listing()
    assert {p["id"] for p in anchors["policies"]} == {"honest-trader", "greedy-harvester", "aggressive-raider", "random"}
