"""Discovery, the OpenAPI document, and the router-level envelopes (docs/api.md)."""
from __future__ import annotations

import json
import re

from orchestrator.finite import INT_RANGE
from orchestrator.validation import PLAIN_TEXT
from tests.api.util import bearer

SPEC_TABLE = [
    "GET /api/v1", "GET /api/v1/openapi.json", "GET /api/v1/me", "GET /api/v1/scenarios/schema",
    "GET /api/v1/library/scenarios", "GET /api/v1/library/anchors", "POST /api/v1/scenarios/validate",
    "GET /api/v1/scenarios", "POST /api/v1/scenarios", "GET /api/v1/scenarios/:id", "PUT /api/v1/scenarios/:id",
    "DELETE /api/v1/scenarios/:id", "GET /api/v1/skills", "POST /api/v1/skills", "GET /api/v1/skills/:id",
    "PUT /api/v1/skills/:id", "DELETE /api/v1/skills/:id",
    "POST /api/v1/runs/estimate", "POST /api/v1/runs", "GET /api/v1/runs", "GET /api/v1/runs/:id",
    # docs/api.md: the endpoints the API names without shape, then the public match pages
    "GET /api/v1/runs/:id/transcript", "GET /api/v1/runs/:id/decisions",  # the latter: docs/RUBRIC.md
    "POST /api/v1/runs/:id/cancel", "GET /api/v1/batches/:id", "GET /api/v1/usage",
    # docs/AGENTS.md: an agent seat's turns
    "GET /api/v1/runs/:id/seats/:seat/turn", "POST /api/v1/runs/:id/seats/:seat/actions",
    # leaderboards, paired comparisons and exports (analysis)
    "GET /api/v1/leaderboard", "GET /api/v1/compare", "GET /api/v1/runs/:id/export", "GET /api/v1/batches/:id/export",
    # result bundles
    "GET /api/v1/runs/:id/bundle", "GET /api/v1/batches/:id/bundle", "GET /api/v1/matches/:id/bundle",
    "GET /api/matches/:id/report", "GET /api/matches/:id/log", "GET /api/matches/:id/pgn",
    "GET /api/matches/:id/live", "GET /api/matches/:id/replay",
]


def test_discovery_needs_no_token_and_lists_every_route(client, live):
    r = client.get("/api/v1")
    assert r.status_code == 200
    d = r.json()
    assert d["version"] == 1
    assert d["openapi"] == f"{live.url}/api/v1/openapi.json"
    assert d["mcp"] == f"{live.url}/mcp/studio"
    assert "Bearer" in d["auth"] and "x-api-key" in d["auth"]
    assert d["endpoints"] == SPEC_TABLE  # the API's spelling and order


def test_openapi_document_is_3_1_and_covers_every_endpoint(client):
    r = client.get("/api/v1/openapi.json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["openapi"] == "3.1.0"
    assert doc["info"]["title"] and doc["info"]["version"]
    operations = {m.upper() + " " + re.sub(r"{(\w+)}", r":\1", p) for p, ops in doc["paths"].items() for m in ops}
    assert operations == set(SPEC_TABLE) - {"GET /api/v1/openapi.json"}
    assert "422" not in json.dumps(doc["paths"])  # never 422
    body = doc["paths"]["/api/v1/scenarios"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/ScenarioBody"}
    schemes = doc["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} == {"http", "apiKey"}


def test_openapi_request_schemas_are_the_validating_models(client):
    schemas = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    body = schemas["ScenarioBody"]
    assert body["required"] == ["name"] and body["additionalProperties"] is False
    assert body["properties"]["name"] == {"maxLength": 60, "minLength": 2, "title": "Name", "type": "string",
                                          "pattern": PLAIN_TEXT}
    env = schemas["Env"]["properties"]
    assert env["turn_timeout_ms"]["minimum"] == 5000 and env["turn_timeout_ms"]["maximum"] == 300000
    assert schemas["SkillBody"]["required"] == ["name", "text"]


def _integers(schema, schemas, path=(), seen=frozenset()):
    """(path, integer schema) for every integer a request schema can carry, following $refs once each."""
    if isinstance(schema, list):
        for item in schema:
            yield from _integers(item, schemas, path, seen)
        return
    if not isinstance(schema, dict):
        return
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            yield from _integers(schemas[name], schemas, path + (name,), seen | {name})
        return
    if schema.get("type") == "integer":
        yield path, schema
    for key, value in schema.items():
        if key == "properties":
            for prop, sub in value.items():
                yield from _integers(sub, schemas, path + (prop,), seen)
        elif isinstance(value, (dict, list)):
            yield from _integers(value, schemas, path, seen)


def test_every_integer_a_body_carries_states_the_64_bit_bound_the_server_holds(client, lab_token):
    # schemathesis sent trials = 1316565780218250002432, valid by a document with no maximum, and the
    # server refused it (400 bad_trials): the store holds 64-bit integers, so the document says so
    doc = client.get("/api/v1/openapi.json").json()
    schemas = doc["components"]["schemas"]
    unbounded = [(f"{method} {path}",) + where for path, ops in doc["paths"].items() for method, op in ops.items()
                 for where, s in _integers(op.get("requestBody", {}), schemas)
                 if not s.get("maximum", INT_RANGE + 1) <= INT_RANGE]
    assert unbounded == []
    run_body = schemas["RunBody"]["properties"]
    assert run_body["trials"]["maximum"] == INT_RANGE
    r = client.post("/api/v1/runs/estimate", headers=bearer(lab_token),
                    json={"scenario_id": "svc:x", "roster": [{"model": "local/random"}], "trials": INT_RANGE + 1})
    assert r.status_code == 400 and r.json()["error"] == "bad_trials", r.text


def test_unknown_route_is_not_found_envelope(client):
    r = client.get("/api/v1/nothing-here")
    assert r.status_code == 404
    assert r.json()["error"] == "not_found"


def test_wrong_method_is_method_not_allowed_with_allow_header(client):
    r = client.delete("/api/v1/scenarios")
    assert r.status_code == 405
    assert r.json()["error"] == "method_not_allowed"
    assert r.headers["allow"] == "GET, POST"
    r = client.post("/api/v1/skills/usk_x")
    assert r.status_code == 405 and r.headers["allow"] == "GET, PUT, DELETE"


def test_body_that_is_not_json_is_bad_request(client, lab_token):
    for raw in (b"{not json", b"", b"NaN", b'{"name": "ab", "season_ticks": Infinity}'):
        r = client.post("/api/v1/scenarios/validate", content=raw, headers={**bearer(lab_token),
                                                                            "content-type": "application/json"})
        assert r.status_code == 400, raw
        assert r.json()["error"] == "bad_request"


def test_body_that_is_not_an_object_is_bad_request(client, lab_token):
    for body in ([], "x", 5, None):
        r = client.post("/api/v1/scenarios", json=body, headers=bearer(lab_token))
        assert (r.status_code, r.json()["error"]) == (400, "bad_request"), body


def test_oversized_body_is_bad_request(client, lab_token):
    r = client.post("/api/v1/skills", json={"name": "big", "text": "x" * 70_000}, headers=bearer(lab_token))
    assert (r.status_code, r.json()["error"]) == (400, "bad_request")
    assert "65536" in r.json()["message"]


def test_a_server_fault_is_internal_error_envelope(tmp_path):
    from fastapi.testclient import TestClient

    from api.app import create_app

    app = create_app(tmp_path / "data")

    @app.get("/api/v1/boom")
    def boom() -> dict:
        raise RuntimeError("simulated fault")

    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/api/v1/boom")
    assert r.status_code == 500
    assert r.json()["error"] == "internal_error" and "simulated" not in r.json()["message"]
