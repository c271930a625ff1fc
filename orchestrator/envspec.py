"""The scenario `env` object (GET /api/v1/scenarios/schema): one model for scenarios and run overrides.

The model is built from the engine's live tables (resource names, anchor ids), so the JSON Schema
served to clients lists exactly what the engine accepts.
"""
from __future__ import annotations

from typing import Annotated, Union

from pydantic import AfterValidator, Field, StrictFloat, StrictInt, WithJsonSchema, create_model

from engine import anchors as engine_anchors
from engine.rules import RESOURCES, SEED_MAX
from orchestrator.validation import StrictModel

HINTS = {
    "seed": f"send an integer from 0 to {SEED_MAX}, or omit it for a fresh seed per run",
    "spawn_seed": f"send an integer from 0 to {SEED_MAX}, or omit it",
    "turn_timeout_ms": "send an integer from 5000 to 300000",
    "actions_per_turn": "send an integer from 1 to 5",
    "max": "send a number from 0 to 10 (1 is the base pool size)",
    "regen": "send a number from 0 to 10 (1 is the base regrowth rate)",
    "resources": f"send an object keyed by {', '.join(RESOURCES)}, each value {{max?, regen?}}",
    "anchors": "send policy ids (repeats allowed) or one population id, at most "
               f"{engine_anchors.MAX_ANCHORS} bots after expansion; ids: {', '.join(engine_anchors.all_ids())}",
    "env": "send an object with any of seed, spawn_seed, turn_timeout_ms, actions_per_turn, resources, anchors",
}

Seed = Annotated[int, Field(ge=0, le=SEED_MAX)]
# Ints stay ints and floats stay floats, so the env is hashed exactly as the client sent it.
Multiplier = Annotated[Union[StrictInt, StrictFloat], Field(ge=0, le=10),
                       WithJsonSchema({"type": "number", "minimum": 0, "maximum": 10})]


def _expand_anchors(value: list[str]) -> list[str]:
    try:
        engine_anchors.expand(value)
    except engine_anchors.AnchorError as e:
        raise ValueError(str(e)) from None
    return value  # stored as given; expansion happens when a run plays it


def _anchors_schema() -> dict:
    policies = [p["id"] for p in engine_anchors.listing()["policies"]]
    populations = [p["id"] for p in engine_anchors.listing()["populations"]]
    return {"anyOf": [
        {"type": "array", "items": {"enum": policies}, "maxItems": engine_anchors.MAX_ANCHORS,
         "description": "policy ids, repeats allowed; [] means no anchors"},
        {"type": "array", "items": {"enum": populations}, "minItems": 1, "maxItems": 1,
         "description": "one population id that expands to its members"},
    ]}


Anchors = Annotated[list[str], AfterValidator(_expand_anchors), WithJsonSchema(_anchors_schema())]


class ResourceMultipliers(StrictModel):
    """Multipliers of the base definition: 1 is the base, 0 removes the pool or its regrowth."""
    max: Multiplier = None
    regen: Multiplier = None


Resources = create_model(
    "Resources", __base__=StrictModel,
    **{name: (ResourceMultipliers, Field(default=None)) for name in RESOURCES})


class Env(StrictModel):
    """Every field optional; omitted fields take the base world's defaults when a run plays."""
    seed: Seed = None
    spawn_seed: Seed = None
    turn_timeout_ms: Annotated[int, Field(ge=5000, le=300000)] = None
    actions_per_turn: Annotated[int, Field(ge=1, le=5)] = None
    resources: Resources = None
    anchors: Anchors = None
