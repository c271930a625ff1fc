"""What the service lists, read-only: the scenario JSON Schema, the library scenarios and the anchors,
all from live engine tables."""
from __future__ import annotations

from functools import lru_cache

from engine import anchors as engine_anchors
from engine import library
from engine.rules import RESOURCES
from orchestrator.auth import Principal, require
from orchestrator.scenarios import READ, ScenarioBody

SCHEMA_ID = "svc://studio/scenario-schema"

EXAMPLES = [
    {"name": "Lean winter", "description": "Half the food, a long season, the standard anchors.",
     "season_ticks": 600,
     "env": {"resources": {"food": {"max": 0.5, "regen": 0.5}}, "anchors": ["anchors-v1"]}},
    {"name": "Replayable duel", "season_ticks": 120,
     "env": {"seed": 42, "spawn_seed": 7, "actions_per_turn": 3, "turn_timeout_ms": 20000,
             "anchors": ["honest-trader", "aggressive-raider"]}},
]


@lru_cache(maxsize=1)
def _schema() -> dict:
    body = ScenarioBody.model_json_schema()
    doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
           **{k: v for k, v in body.items() if k not in ("title", "description")},
           "title": "Scenario definition",
           "description": "Body of POST /api/v1/scenarios and /scenarios/validate (PUT takes the same fields, all "
                          f"optional). Resource types: {', '.join(RESOURCES)}. Anchor ids: "
                          f"{', '.join(engine_anchors.all_ids())}.",
           "examples": EXAMPLES}
    return doc


def scenario_schema(principal: Principal) -> dict:
    require(principal, READ)
    return _schema()


def library_scenarios(principal: Principal) -> dict:
    require(principal, READ)
    return {"scenarios": library.entries()}


def anchor_listing(principal: Principal) -> dict:
    require(principal, READ)
    return engine_anchors.listing()
