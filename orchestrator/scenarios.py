"""Saved scenarios: validation to a normalized definition, content hash, receipt, and CRUD.

Every surface (REST, MCP, notebooks) calls these functions with a Principal; they check scope and
plan themselves, so no transport can skip a rule.
"""
from __future__ import annotations

import json
import sqlite3
from typing import Annotated, Any

from pydantic import Field

from engine.hashing import BASE_ID, DEFAULT_SEASON_TICKS, content_hash
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.envspec import HINTS as ENV_HINTS, Env
from orchestrator.errors import DomainError
from orchestrator.ids import new_id
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


def view(row: sqlite3.Row) -> dict:
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "season_ticks": row["season_ticks"], "env": json.loads(row["env"]), "hash": row["hash"],
            "base": BASE_ID, "created_at_ms": row["created_at_ms"], "updated_at_ms": row["updated_at_ms"]}


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
        row = c.execute("SELECT * FROM scenarios WHERE account_id = ? AND name = ? AND hash = ? "
                        "ORDER BY seq DESC LIMIT 1", (principal.account_id, defn["name"], digest)).fetchone()
        created = row is None
        if created:
            count = c.execute("SELECT COUNT(*) FROM scenarios WHERE account_id = ?", (principal.account_id,)).fetchone()[0]
            if count >= allowance:
                raise DomainError("too_many_scenarios", f"the {principal.plan['name']} plan allows {allowance} saved "
                                  "scenarios and all are in use; delete one (validate still works)")
            scenario_id = new_id("usc_")
            c.execute("INSERT INTO scenarios (id, account_id, name, description, season_ticks, env, hash, created_at_ms) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                      (scenario_id, principal.account_id, defn["name"], defn["description"], defn["season_ticks"],
                       json.dumps(defn["env"]), digest, core.clock.now_ms()))
            row = c.execute("SELECT * FROM scenarios WHERE id = ?", (scenario_id,)).fetchone()
    return created, {"ok": True, "created": created, "scenario": view(row), "receipt": receipt(principal, defn)}


def list_scenarios(core: Core, principal: Principal) -> dict:
    require(principal, READ)
    rows = core.store.all("SELECT * FROM scenarios WHERE account_id = ? ORDER BY seq DESC", (principal.account_id,))
    return {"scenarios": [view(r) for r in rows]}


def _row(c: Any, principal: Principal, scenario_id: str) -> sqlite3.Row:
    # Foreign ids read as unknown (docs/api.md): the account filter is part of the lookup.
    row = c.execute("SELECT * FROM scenarios WHERE id = ? AND account_id = ?",
                    (scenario_id, principal.account_id)).fetchone()
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
        current = view(_row(c, principal, scenario_id))
        defn = _normalize({**current, **patch})
        c.execute("UPDATE scenarios SET name = ?, description = ?, season_ticks = ?, env = ?, hash = ?, "
                  "updated_at_ms = ? WHERE id = ?",
                  (defn["name"], defn["description"], defn["season_ticks"], json.dumps(defn["env"]),
                   definition_hash(defn), core.clock.now_ms(), scenario_id))
        row = c.execute("SELECT * FROM scenarios WHERE id = ?", (scenario_id,)).fetchone()
    return {"scenario": view(row)}


def delete(core: Core, principal: Principal, scenario_id: str) -> dict:
    require(principal, WRITE, write=True)
    with core.store.write() as c:
        _row(c, principal, scenario_id)
        c.execute("DELETE FROM scenarios WHERE id = ?", (scenario_id,))
    return {"ok": True, "deleted": scenario_id}


def load(core: Core, principal: Principal, scenario_id: str) -> dict:
    """The stored scenario view for a launch (runs issue): unknown or foreign ids raise unknown_scenario."""
    return view(_row(core.store.conn(), principal, scenario_id))
