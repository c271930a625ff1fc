"""Schema-valid input is accepted and the schema says what is refused: whole-number floats are
refused where an integer goes (bodies are strict); names refuse NUL and bidirectional overrides, and say so."""
from __future__ import annotations

import json
import re

import pytest

from orchestrator.validation import PLAIN_TEXT, PLAIN_TEXT_MESSAGE
from tests.api.util import bearer


def test_a_whole_number_float_is_refused_where_an_integer_goes(client, make_account):
    """docs/api.md: bodies are strict; 682.0 is a float, refused by an integer field with its code."""
    token = make_account("lab").token()
    for value in (682.0, 682.5, 1e400):
        r = client.post("/api/v1/scenarios/validate", content=json.dumps({"name": "floaty"})[:-1]
                        + f', "season_ticks": {value!r}}}'.replace("inf", "1e400"), headers=bearer(token)
                        | {"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["error"] == "bad_season_ticks", (value, r.text)
    r = client.post("/api/v1/scenarios/validate", json={"name": "floaty", "season_ticks": 682}, headers=bearer(token))
    assert r.status_code == 200 and r.json()["scenario"]["season_ticks"] == 682, r.text


@pytest.mark.parametrize("name", ["nul\x00name", "evil\u202eexe.txt", "iso\u2066late", "tab\there"])
def test_names_refuse_control_and_bidi_characters(client, make_account, name):
    token = make_account("lab").token()
    r = client.post("/api/v1/scenarios", json={"name": name}, headers=bearer(token))
    assert r.status_code == 400 and r.json()["error"] == "bad_scenario"
    assert PLAIN_TEXT_MESSAGE in r.json()["message"]
    r = client.post("/api/v1/skills", json={"name": name, "text": "a skill with a bad name"}, headers=bearer(token))
    assert r.status_code == 400 and PLAIN_TEXT_MESSAGE in r.json()["message"]


def test_the_schema_carries_the_pattern(client):
    text = json.dumps(client.get("/api/v1/openapi.json").json())
    assert text.count('"pattern": ' + json.dumps(PLAIN_TEXT)) >= 3  # scenario, skill, run names
    assert re.fullmatch(PLAIN_TEXT, "Ünïcode names — fine") and not re.fullmatch(PLAIN_TEXT, "a\u202eb")
