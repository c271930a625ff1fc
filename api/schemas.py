"""Response shapes for the OpenAPI document. Routes return the service core's dicts; these models
only describe them, and the schemathesis run in the suite checks every answer against them."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from orchestrator.envspec import Env


class ErrorEnvelope(BaseModel):
    error: str
    message: str


class Discovery(BaseModel):
    api: str
    version: int
    docs: str
    openapi: str
    mcp: str
    auth: str
    endpoints: list[str]


class User(BaseModel):
    id: str
    email: str
    handle: str


class PlanView(BaseModel):
    id: str
    name: str
    status: str
    source: str
    period_end_ms: int | None


class TokenView(BaseModel):
    name: str
    prefix: str
    scopes: list[str]
    expires_at_ms: int | None


class Limits(BaseModel):
    seats_per_run: int
    ticks_per_run: int
    agent_turns_per_month: int | None
    queued_runs: int
    series_max_trials: int
    saved_scenarios: int
    saved_skills: int
    access_tokens: int
    requests_per_minute: int


class Me(BaseModel):
    user: User
    plan: PlanView
    api_access: Literal["read", "full"]
    token: TokenView
    limits: Limits


class Definition(BaseModel):
    name: str
    description: str
    season_ticks: int
    env: Env


class ScenarioView(Definition):
    id: str
    hash: str
    base: str
    created_at_ms: int
    updated_at_ms: int | None


class ReceiptPlan(BaseModel):
    id: str
    name: str
    ticks_per_run: int
    seats_per_run: int
    saved_scenarios: int


class Warning(BaseModel):
    code: Literal["plan_ticks", "fixed_layout"]
    message: str


class Receipt(BaseModel):
    plan: ReceiptPlan
    warnings: list[Warning]


class Validated(BaseModel):
    valid: Literal[True]
    scenario: Definition
    hash: str
    base: str
    receipt: Receipt


class ScenarioCreated(BaseModel):
    ok: Literal[True]
    created: bool
    scenario: ScenarioView
    receipt: Receipt


class ScenarioOne(BaseModel):
    scenario: ScenarioView


class ScenarioList(BaseModel):
    scenarios: list[ScenarioView]


class Deleted(BaseModel):
    ok: Literal[True]
    deleted: str


class Roster(BaseModel):
    min_agents: int
    max_agents: int


class LibraryEntry(BaseModel):
    id: str
    title: str
    kind: str
    description: str
    hash: str
    season_ticks: int
    roster: Roster
    seed_policy: str
    turn_based: bool
    anchors: list[str]
    resource_multipliers: dict[str, dict[str, float]]


class LibraryList(BaseModel):
    scenarios: list[LibraryEntry]


class Policy(BaseModel):
    id: str
    description: str


class Population(BaseModel):
    id: str
    anchors: list[str]
    description: str


class AnchorListing(BaseModel):
    policies: list[Policy]
    populations: list[Population]


class BuiltinSkill(BaseModel):
    id: str
    name: str
    text: str
    game: str
    blurb: str


class OwnSkill(BaseModel):
    id: str
    name: str
    text: str
    created_at_ms: int
    updated_at_ms: int | None


class SkillLimits(BaseModel):
    name_chars: list[int]
    text_chars: list[int]
    saved_skills: int


class SkillList(BaseModel):
    builtin: list[BuiltinSkill]
    mine: list[OwnSkill]
    limits: SkillLimits


class SkillOne(BaseModel):
    skill: BuiltinSkill | OwnSkill


class SkillCreated(BaseModel):
    ok: Literal[True]
    skill: OwnSkill


JSON_SCHEMA_DOC = {"type": "object", "description": "a JSON Schema (draft 2020-12) document",
                   "required": ["$schema", "$id", "title", "type", "properties", "examples"]}
