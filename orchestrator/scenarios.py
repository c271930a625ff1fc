"""Saved scenarios: validation to a normalized definition, content hash, receipt, and CRUD.

Every surface (REST, MCP, notebooks) calls these functions with a Principal; they check scope and
plan themselves, so no transport can skip a rule.
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from engine.hashing import BASE_ID, DEFAULT_SEASON_TICKS, content_hash
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.envspec import HINTS as ENV_HINTS, Env
from orchestrator.errors import DomainError
from orchestrator.ids import new_id
from orchestrator.records.scenario import Scenario
from orchestrator.store import Connection, scenarios as stored
from orchestrator.validation import PLAIN_TEXT, StrictModel, parse

READ, WRITE = "scenarios:read", "scenarios:write"
CODES = {"name": "bad_scenario", "description": "bad_scenario", "season_ticks": "bad_season_ticks", "env": "bad_env"}
HINTS = {**ENV_HINTS,
         "name": "send a string of 2 to 60 characters",
         "description": "send a string of at most 300 characters, or null",
         "season_ticks": f"send an integer from 10 to 2000, or null for the base default {DEFAULT_SEASON_TICKS}"}

Name = Annotated[str, Field(min_length=2, max_length=60, pattern=PLAIN_TEXT)]
Description = Annotated[str, Field(max_length=300)]
SeasonTicks = Annotated[int, Field(ge=10, le=2000)]


class ScenarioBody(StrictModel):
    """A scenario definition (create, validate). Description is excluded from the content hash."""
    name: Name
    description: Description | None = None
    season_ticks: SeasonTicks | None = None
    env: Env = None


class ScenarioPatch(StrictModel):
    """PUT body: every field optional, omitted fields keep their value; a given env replaces the env."""
    name: Name = None
    description: Description | None = None
    season_ticks: SeasonTicks | None = None
    env: Env = None


def _normalize(fields: dict) -> dict:
    """Resolve what the definition leaves open: description "" and season_ticks 300 when null or omitted."""
    ticks = fields.get("season_ticks")
    return {"name": fields["name"], "description": fields.get("description") or "",
            "season_ticks": DEFAULT_SEASON_TICKS if ticks is None else ticks, "env": fields.get("env") or {}}


def check_definition(body: Any) -> dict:
    """Raw create/validate body -> normalized definition {name, description, season_ticks, env}."""
    model = parse(ScenarioBody, body, codes=CODES, hints=HINTS)
    return _normalize(model.model_dump(exclude_unset=True))


def definition_hash(defn: dict) -> str:
    return content_hash(BASE_ID, defn["season_ticks"], defn["env"])


def receipt(principal: Principal, defn: dict) -> dict:
    plan = principal.plan
    warnings = []
    if defn["season_ticks"] > plan["ticks_per_run"]:
        warnings.append({"code": "plan_ticks", "message": f"season_ticks {defn['season_ticks']} is longer than the "
                         f"{plan['name']} plan's {plan['ticks_per_run']} ticks per run; runs of it will be refused "
                         "with plan_ticks unless a run sets a shorter season_ticks"})
    env = defn["env"]
    if "seed" in env and "spawn_seed" in env:
        warnings.append({"code": "fixed_layout", "message": "env.seed and env.spawn_seed are both pinned: every run "
                         "replays one layout, and a multi-trial series of it is refused; drop spawn_seed to vary it"})
    return {"plan": {"id": plan["id"], "name": plan["name"], "ticks_per_run": plan["ticks_per_run"],
                     "seats_per_run": plan["seats_per_run"], "saved_scenarios": plan["saved_scenarios"]},
            "warnings": warnings}


def view(s: Scenario) -> dict:
    return {"id": s.id, "name": s.name, "description": s.description, "season_ticks": s.season_ticks,
            "env": s.env, "hash": s.hash, "base": BASE_ID, "created_at_ms": s.created_at_ms,
            "updated_at_ms": s.updated_at_ms}


def validate(core: Core, principal: Principal, body: Any) -> dict:
    """POST /scenarios/validate: persists nothing; free plans may call it."""
    require(principal, READ)
    defn = check_definition(body)
    return {"valid": True, "scenario": defn, "hash": definition_hash(defn), "base": BASE_ID,
            "receipt": receipt(principal, defn)}


def create(core: Core, principal: Principal, body: Any) -> tuple[bool, dict]:
    """Returns (created, {ok, created, scenario, receipt}); same name and hash answers the existing one."""
    require(principal, WRITE, write=True)
    defn = check_definition(body)
    digest = definition_hash(defn)
    allowance = principal.plan["saved_scenarios"]
    with core.store.write() as c:  # check-then-insert under the write lock: concurrent creates stay idempotent
        scenario = stored.same(c, principal.account_id, defn["name"], digest)
        created = scenario is None
        if created:
            if stored.count(c, principal.account_id) >= allowance:
                raise DomainError("too_many_scenarios", f"the {principal.plan['name']} plan allows {allowance} saved "
                                  "scenarios and all are in use; delete one (validate still works)")
            scenario = Scenario(id=new_id("usc_"), account_id=principal.account_id, name=defn["name"],
                                description=defn["description"], season_ticks=defn["season_ticks"], env=defn["env"],
                                hash=digest, created_at_ms=core.clock.now_ms(), updated_at_ms=None)
            stored.insert(c, scenario)
    return created, {"ok": True, "created": created, "scenario": view(scenario), "receipt": receipt(principal, defn)}


def list_scenarios(core: Core, principal: Principal) -> dict:
    require(principal, READ)
    return {"scenarios": [view(s) for s in stored.of_account(core.store.conn(), principal.account_id)]}


def _row(c: Connection, principal: Principal, scenario_id: str) -> Scenario:
    # Foreign ids read as unknown (docs/api.md): the account filter is part of the lookup.
    row = stored.get(c, scenario_id, principal.account_id)
    if row is None:
        raise DomainError("unknown_scenario", f"no saved scenario {scenario_id!r} on this account; "
                          "list yours with GET /api/v1/scenarios")
    return row


def get(core: Core, principal: Principal, scenario_id: str) -> dict:
    require(principal, READ)
    return {"scenario": view(_row(core.store.conn(), principal, scenario_id))}


def update(core: Core, principal: Principal, scenario_id: str, body: Any) -> dict:
    """PUT: omitted fields keep their value; the hash is recomputed, played runs keep their snapshot."""
    require(principal, WRITE, write=True)
    patch = parse(ScenarioPatch, body, codes=CODES, hints=HINTS).model_dump(exclude_unset=True)
    with core.store.write() as c:
        current = _row(c, principal, scenario_id)
        defn = _normalize({**view(current), **patch})
        scenario = Scenario(**{**current.model_dump(), **defn, "hash": definition_hash(defn),
                               "updated_at_ms": core.clock.now_ms()})
        stored.replace(c, scenario)
    return {"scenario": view(scenario)}


def delete(core: Core, principal: Principal, scenario_id: str) -> dict:
    require(principal, WRITE, write=True)
    with core.store.write() as c:
        _row(c, principal, scenario_id)
        stored.delete(c, scenario_id)
    return {"ok": True, "deleted": scenario_id}


def load(core: Core, principal: Principal, scenario_id: str) -> dict:
    """The stored scenario view for a launch (runs issue): unknown or foreign ids raise unknown_scenario."""
    return view(_row(core.store.conn(), principal, scenario_id))
