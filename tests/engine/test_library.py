"""The library, anchors, built-in skills, rules document and hashing."""
import hashlib
import json

import pytest

from engine import anchors, library, rules, rules_doc, skills
from engine.hashing import BASE_ID, content_hash


def test_library_has_base_and_three_benchmarks_with_fixed_seeds():
    entries = library.entries()
    ids = [e["id"] for e in entries]
    assert ids[0] == BASE_ID and len(ids) >= 4
    base = entries[0]
    assert base["kind"] == "base" and base["season_ticks"] == 300
    bench = [e for e in entries if e["kind"] == "benchmark"]
    assert len(bench) >= 3
    for e in bench:
        d = library.definition(e["id"])
        assert e["seed_policy"] == "fixed" and isinstance(d["env"]["seed"], int)
        assert e["roster"]["min_agents"] <= e["roster"]["max_agents"]
        assert set(e["anchors"]) <= set(anchors.POPULATIONS)
        assert len(e["hash"]) == 16 and int(e["hash"], 16) >= 0


def test_hash_is_sha256_of_rfc8785_bytes():
    env = {"seed": 3, "resources": {"food": {"regen": 0.5, "max": 2}}}
    doc = {"base": BASE_ID, "env": {"resources": {"food": {"max": 2, "regen": 0.5}}, "seed": 3}, "season_ticks": 300}
    canonical = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    assert content_hash(BASE_ID, None, env) == hashlib.sha256(canonical).hexdigest()[:16]
    assert content_hash(BASE_ID, 300, env) == content_hash(BASE_ID, None, env)
    assert content_hash(BASE_ID, 301, env) != content_hash(BASE_ID, 300, env)


def test_anchor_expansion():
    assert anchors.expand(["anchors-v1"]) == list(rules.POLICIES)
    assert anchors.expand(["random", "random"]) == ["random", "random"]
    assert anchors.expand([]) == []
    for bad in (["nobody"], ["anchors-v1", "random"], ["random"] * 9):
        with pytest.raises(anchors.AnchorError):
            anchors.expand(bad)
    listing = anchors.listing()
    assert {p["id"] for p in listing["policies"]} == set(rules.POLICIES)


def test_six_builtin_skills_for_the_world():
    assert set(skills.BUILTIN_SKILLS) == {f"builtin:{k}" for k in
                                          ("trader", "survivalist", "aggressor", "diplomat", "builder", "explorer")}
    for s in skills.BUILTIN_SKILLS.values():
        assert s["game"] == "world" and 10 <= len(s["text"]) <= 2000 and 2 <= len(s["name"]) <= 60


def test_rules_text_carries_the_table_numbers():
    text = rules_doc.rules_text()
    assert rules.RULES_VERSION in text
    for r, row in rules.RESOURCE_TABLE.items():
        assert f"| {r} | " in text and str(row["regen"]) in text
    for key in ("start_food", "eat_satiety", "offer_ttl", "raid_fail_satiety", "say_max_chars", "tool_gather_bonus"):
        assert str(rules.WORLD[key]) in text
    assert "from 5 wood and 3 stone" in text and "from 2 wood, 1 stone and 2 ore" in text
    assert "{" not in text and "}" not in text
    for name in rules.ACTIONS:
        assert f"- {name}" in text
