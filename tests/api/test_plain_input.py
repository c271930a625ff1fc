"""Schema-valid input is accepted and the schema says what is refused: whole-number floats are
integers (as JSON Schema counts them); names refuse NUL and bidirectional overrides, and say so."""
from __future__ import annotations

import json
import re

import pytest

from orchestrator.validation import PLAIN_TEXT, PLAIN_TEXT_MESSAGE, whole_numbers
from tests.api.util import bearer


def test_whole_number_floats_are_integers():
    assert whole_numbers({"a": [682.0, 1.5, True, "2.0"], "b": 3.0}) == {"a": [682, 1.5, True, "2.0"], "b": 3}
    assert type(whole_numbers(682.0)) is int


def test_a_whole_number_float_season_is_accepted(client, make_account):
    token = make_account("lab").token()
    r = client.post("/api/v1/scenarios/validate", json={"name": "floaty", "season_ticks": 682.0},
                    headers=bearer(token))
    assert r.status_code == 200 and r.json()["scenario"]["season_ticks"] == 682, r.text
    r = client.post("/api/v1/scenarios/validate", json={"name": "floaty", "season_ticks": 682.5},
                    headers=bearer(token))
    assert r.status_code == 400 and r.json()["error"] == "bad_season_ticks"


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
