"""The service core without HTTP: what REST calls, MCP and notebooks call the same way."""
from __future__ import annotations

import pytest

from engine.hashing import BASE_ID
from orchestrator import listing, me, scenarios, skills
from orchestrator.errors import DomainError


def test_scenario_service_round_trip(core, principal):
    p, _, _ = principal("pro")
    created, result = scenarios.create(core, p, {"name": "Core", "env": {"seed": 3}})
    assert created and result["scenario"]["base"] == BASE_ID
    sid = result["scenario"]["id"]
    assert scenarios.get(core, p, sid)["scenario"] == result["scenario"]
    assert scenarios.load(core, p, sid)["env"] == {"seed": 3}
    created_again, again = scenarios.create(core, p, {"name": "Core", "env": {"seed": 3}})
    assert not created_again and again["scenario"]["id"] == sid
    assert scenarios.update(core, p, sid, {"season_ticks": 20})["scenario"]["season_ticks"] == 20
    assert scenarios.delete(core, p, sid) == {"ok": True, "deleted": sid}
    with pytest.raises(DomainError) as e:
        scenarios.get(core, p, sid)
    assert e.value.code == "unknown_scenario"


def test_services_check_scope_and_plan_themselves(core, principal):
    reader, _, _ = principal("pro", ("scenarios:read",))
    with pytest.raises(DomainError) as e:
        scenarios.create(core, reader, {"name": "No"})
    assert e.value.code == "scope_required"
    free, _, _ = principal("free", ("scenarios:write",))
    with pytest.raises(DomainError) as e:
        skills.create(core, free, {"name": "No", "text": "not on a free plan"})
    assert e.value.code == "plan_api"
    runs_only, _, _ = principal("pro", ("runs:read",))
    for call in (lambda: listing.scenario_schema(runs_only), lambda: listing.library_scenarios(runs_only),
                 lambda: listing.anchor_listing(runs_only), lambda: skills.list_skills(core, runs_only)):
        with pytest.raises(DomainError) as e:
            call()
        assert e.value.code == "scope_required"
    assert me.me(runs_only)["token"]["scopes"] == ["runs:read"]


def test_skill_resolve_for_launch(core, principal):
    p, _, _ = principal("pro")
    other, _, _ = principal("pro")
    own = skills.create(core, p, {"name": "Mine", "text": "Private directions."})["skill"]
    assert skills.resolve(core, p, own["id"]) == {"id": own["id"], "name": "Mine", "text": "Private directions."}
    assert skills.resolve(core, other, "builtin:trader")["name"] == "Trader"
    with pytest.raises(DomainError) as e:
        skills.resolve(core, other, own["id"])
    assert e.value.code == "unknown_skill"
