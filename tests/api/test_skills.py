"""Skills: built-ins readable by all and never editable; own skills private; the limits object."""
from __future__ import annotations

import httpx

from engine.skills import BUILTIN_SKILLS
from orchestrator import accounts, auth
from orchestrator.clock import ManualClock
from orchestrator.core import Core
from tests.api.util import MINUTE_START, bearer, serving

SKILL = {"name": "Patient trader", "text": "Wait for fair offers; never raid first."}


def test_list_has_builtins_with_text_mine_and_limits(client, make_account):
    token = make_account("pro").token()
    d = client.get("/api/v1/skills", headers=bearer(token)).json()
    assert d["builtin"] == list(BUILTIN_SKILLS.values())
    assert [s["id"] for s in d["builtin"]] == [f"builtin:{k}" for k in
                                               ("trader", "survivalist", "aggressor", "diplomat", "builder", "explorer")]
    assert all(s["game"] == "world" and s["text"] and s["blurb"] for s in d["builtin"])
    assert d["mine"] == []
    assert d["limits"] == {"name_chars": [2, 60], "text_chars": [10, 2000], "saved_skills": 50}


def test_create_get_update_delete_own_skill(tmp_path):
    core = Core.open(tmp_path / "data", clock=ManualClock(MINUTE_START))  # the server's time: the test moves it
    accounts.create_account(core, "skills@example.org", plan="lab")
    with serving(core) as url, httpx.Client(base_url=url, timeout=10) as client:
        h = bearer(auth.mint(core, "skills@example.org")[0])
        r = client.post("/api/v1/skills", json=SKILL, headers=h)
        assert r.status_code == 201 and r.json()["ok"] is True
        skill = r.json()["skill"]
        assert skill["id"].startswith("usk_") and skill["name"] == SKILL["name"] and skill["text"] == SKILL["text"]
        assert skill["created_at_ms"] > 0 and "game" not in skill  # own skills carry no world tag
        assert client.get(f"/api/v1/skills/{skill['id']}", headers=h).json() == {"skill": skill}
        core.clock.advance(1)  # the update comes a millisecond after the creation
        updated = client.put(f"/api/v1/skills/{skill['id']}", json={"text": "Raid only when raided first."},
                             headers=h).json()["skill"]
        assert updated["name"] == SKILL["name"] and updated["text"] == "Raid only when raided first."
        assert updated["updated_at_ms"] > skill["created_at_ms"]
        renamed = client.put(f"/api/v1/skills/{skill['id']}", json={"name": "Avenger"}, headers=h).json()["skill"]
        assert renamed["text"] == updated["text"] and renamed["name"] == "Avenger"
        r = client.delete(f"/api/v1/skills/{skill['id']}", headers=h)
        assert r.json() == {"ok": True, "deleted": skill["id"]}
        r = client.get(f"/api/v1/skills/{skill['id']}", headers=h)
        assert (r.status_code, r.json()["error"]) == (404, "unknown_skill")


def test_builtins_resolve_for_every_account_and_cannot_change(client, make_account):
    token = make_account("starter").token()
    h = bearer(token)
    r = client.get("/api/v1/skills/builtin:trader", headers=h)
    assert r.json() == {"skill": BUILTIN_SKILLS["builtin:trader"]}
    for method, body in (("PUT", {"name": "Mine now"}), ("DELETE", None)):
        r = client.request(method, "/api/v1/skills/builtin:trader", json=body, headers=h)
        assert (r.status_code, r.json()["error"]) == (400, "bad_skill")
        assert "built-in" in r.json()["message"]
    for method in ("GET", "PUT", "DELETE"):
        r = client.request(method, "/api/v1/skills/builtin:nonesuch", json={"name": "xx"} if method == "PUT" else None,
                           headers=h)
        assert (r.status_code, r.json()["error"]) == (404, "unknown_skill")


def test_own_skills_list_newest_first(client, make_account):
    token = make_account("pro").token()
    ids = [client.post("/api/v1/skills", json={**SKILL, "name": f"skill {i}"}, headers=bearer(token)).json()["skill"]["id"]
           for i in range(3)]
    mine = client.get("/api/v1/skills", headers=bearer(token)).json()["mine"]
    assert [s["id"] for s in mine] == ids[::-1]


def test_skill_allowance(client, make_account):
    token = make_account("starter").token()  # 20 saved skills
    h = bearer(token)
    ids = [client.post("/api/v1/skills", json={**SKILL, "name": f"s{i}"}, headers=h).json()["skill"]["id"]
           for i in range(20)]
    r = client.post("/api/v1/skills", json=SKILL, headers=h)
    assert (r.status_code, r.json()["error"]) == (400, "too_many_skills")
    assert "20" in r.json()["message"]
    client.delete(f"/api/v1/skills/{ids[5]}", headers=h)
    assert client.post("/api/v1/skills", json=SKILL, headers=h).status_code == 201
