"""Response shapes for the OpenAPI document and the MCP tools' output schemas. Routes and tools return
the service core's dicts; these models only describe them. tests/api/test_response_shapes.py checks a
real answer of every operation against the served document, and tests/mcp/test_output_schemas.py every
tool's result against its output schema, so a field the core adds without its model fails there."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, create_model

from orchestrator.envspec import Env
from orchestrator.records.account import Account
from orchestrator.records.scenario import Scenario
from orchestrator.records.skill import Skill
from orchestrator.records.token import Token
from orchestrator.validation import StrictModel


class Closed(StrictModel):
    """A shape the core closes: additionalProperties false, so an unlisted field is drift. A field that
    may be absent (never null) is written `name: T = None`: not required, typed T alone (no default
    in the schema), as the body models do."""


def as_recorded(record, *names: str) -> dict:
    """The fields a response shares with a record, typed as the record types them, for create_model
    (its bounds are the store's checks, not the wire's promises, so they stay out of the document)."""
    return {name: (record.model_fields[name].annotation, ...) for name in names}


class ErrorEnvelope(Closed):
    error: str
    message: str


class Discovery(Closed):
    api: str
    version: int
    docs: str
    openapi: str
    mcp: str
    auth: str
    endpoints: list[str]


User = create_model("User", __base__=Closed, **as_recorded(Account, "id", "email", "handle"))


class PlanView(Closed):
    id: str
    name: str
    status: str
    source: str
    period_end_ms: int | None


TokenView = create_model("TokenView", __base__=Closed, **as_recorded(Token, "name", "prefix"),
                         scopes=(list[str], ...), **as_recorded(Token, "expires_at_ms"))


class Limits(Closed):
    seats_per_run: int
    ticks_per_run: int
    agent_turns_per_month: int | None
    queued_runs: int
    series_max_trials: int
    saved_scenarios: int
    saved_skills: int
    access_tokens: int
    requests_per_minute: int


class Me(Closed):
    user: User
    plan: PlanView
    api_access: Literal["read", "full"]
    token: TokenView
    limits: Limits


class Definition(Closed):
    name: str
    description: str
    season_ticks: int
    env: Env


ScenarioView = create_model("ScenarioView", __base__=Definition, **as_recorded(Scenario, "id", "hash"),
                            base=(str, ...), **as_recorded(Scenario, "created_at_ms", "updated_at_ms"))


class ReceiptPlan(Closed):
    id: str
    name: str
    ticks_per_run: int
    seats_per_run: int
    saved_scenarios: int


class Warning(Closed):
    code: Literal["plan_ticks", "fixed_layout"]
    message: str


class Receipt(Closed):
    plan: ReceiptPlan
    warnings: list[Warning]


class Validated(Closed):
    valid: Literal[True]
    scenario: Definition
    hash: str
    base: str
    receipt: Receipt


class ScenarioCreated(Closed):
    ok: Literal[True]
    created: bool
    scenario: ScenarioView
    receipt: Receipt


class ScenarioOne(Closed):
    scenario: ScenarioView


class ScenarioList(Closed):
    scenarios: list[ScenarioView]


class Deleted(Closed):
    ok: Literal[True]
    deleted: str


class Roster(Closed):
    min_agents: int
    max_agents: int


class LibraryEntry(Closed):
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


class LibraryList(Closed):
    scenarios: list[LibraryEntry]


class Policy(Closed):
    id: str
    description: str


class Population(Closed):
    id: str
    anchors: list[str]
    description: str


class AnchorListing(Closed):
    policies: list[Policy]
    populations: list[Population]


class BuiltinSkill(Closed):
    id: str
    name: str
    text: str
    game: str
    blurb: str


OwnSkill = create_model("OwnSkill", __base__=Closed,
                        **as_recorded(Skill, "id", "name", "text", "created_at_ms", "updated_at_ms"))


class SkillLimits(Closed):
    name_chars: list[int]
    text_chars: list[int]
    saved_skills: int


class SkillList(Closed):
    builtin: list[BuiltinSkill]
    mine: list[OwnSkill]
    limits: SkillLimits


class SkillOne(Closed):
    skill: BuiltinSkill | OwnSkill


class SkillCreated(Closed):
    ok: Literal[True]
    skill: OwnSkill


class ScenarioSchema(Closed):
    """The scenario definition's JSON Schema (draft 2020-12): the API's required keywords, plus any
    other keyword of the vocabulary."""
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    schema_: str = Field(alias="$schema")
    id_: str = Field(alias="$id")
    title: str
    type: Literal["object"]
    properties: dict[str, Any]
    examples: list[dict[str, Any]]
