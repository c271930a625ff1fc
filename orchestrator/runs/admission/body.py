"""The run body of POST /runs and POST /runs/estimate (docs/RUNS.md)."""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, StrictFloat, StrictInt, StrictStr, WithJsonSchema

from orchestrator.envspec import HINTS as ENV_HINTS, Env
from orchestrator.seats.keys import ROUTED
from orchestrator.errors import DomainError
from orchestrator.runs.series import until as until_body
from orchestrator.validation import PLAIN_TEXT, StrictModel, parse
from orchestrator.finite import INT_RANGE

MAX_SKILLS = 4
MAX_INSTRUCTIONS = 4000
MAX_DIRECTIONS = 8000
PROVIDERS = ROUTED

# Ints stay ints and floats floats (strict); the schema states the bounds the validators apply.
SpendCap = Annotated[Union[StrictInt, StrictFloat], Field(ge=0), WithJsonSchema({"type": "number", "minimum": 0})]
Temperature = Annotated[Union[StrictInt, StrictFloat], Field(ge=0, le=2),
                        WithJsonSchema({"type": "number", "minimum": 0, "maximum": 2})]


class Seat(StrictModel):
    """One seat of the roster: played by `model` through the account's key for `provider`."""
    model: Annotated[str, Field(min_length=1, max_length=200)]
    provider: Annotated[str, Field(min_length=1, max_length=40)] = None
    name: Annotated[str, Field(min_length=1, max_length=60, pattern=PLAIN_TEXT)] = None
    reasoning: Literal["off", "low", "medium", "high"] = None
    temperature: Temperature = None
    max_tokens: Annotated[int, Field(ge=1, le=200000)] = None
    format: Literal["tools", "json"] = None
    skills: Annotated[list[StrictStr], Field(max_length=MAX_SKILLS)] = None
    instructions: Annotated[str, Field(max_length=MAX_INSTRUCTIONS)] = None


# seat index -> the seat handed over; any other key is refused (bad_fork), so the schema allows no other
ForkSeats = Annotated[dict[Annotated[str, Field(pattern="^[0-9]+$")], Seat],
                      Field(json_schema_extra={"additionalProperties": False})]


class ForkSpec(StrictModel):
    """A run that goes on from tick `tick` of an ended world run (docs/FORKS.md): the seats
    named (by index) are handed to new players from that tick, the others keep the original's."""
    run_id: Annotated[str, Field(min_length=1, max_length=100)]
    tick: Annotated[int, Field(ge=1, le=INT_RANGE)]
    seats: ForkSeats = None
    control: bool = None


class RunBody(StrictModel):
    # both required unless the body forks a run (the fork's admission fills them from the original)
    scenario_id: Annotated[str, Field(min_length=1, max_length=100)] = None
    roster: Annotated[list[Seat], Field(min_length=1)] = None
    fork: ForkSpec = None
    name: Annotated[str, Field(max_length=80, pattern=PLAIN_TEXT)] = None
    season_ticks: Annotated[int, Field(ge=10, le=2000)] = None
    env: Env = None
    max_spend_usd: SpendCap = None
    trials: Annotated[int, Field(ge=1, le=INT_RANGE)] = None
    seed_mode: Literal["vary", "pinned"] = None
    # a series that plays the same seeds, trial by trial, as an earlier series of the account, so two
    # configurations (or a seat with and without a skill) compare pairwise
    paired_with: Annotated[str, Field(min_length=1, max_length=100)] = None
    # which seats' decisions are graded after the match (docs/RUBRIC.md, orchestrator/grading)
    grading: Literal["auto", "all", "off"] = None
    # a series that stops once precise enough, and what the whole series may spend (docs/RUNS.md)
    until: until_body.Until = None
    budget_usd: SpendCap = None


CODES = {"scenario_id": "bad_scenario", "roster": "bad_roster", "name": "bad_request",
         "season_ticks": "bad_season_ticks", "env": "bad_env", "max_spend_usd": "bad_spend_cap",
         "trials": "bad_trials", "seed_mode": "bad_request", "paired_with": "bad_request",
         "grading": "bad_request", "fork": "bad_fork", **until_body.CODES}
HINTS = {**ENV_HINTS,
         "scenario_id": "send a library id (svc:...) or a saved scenario id (usc_...)",
         "roster": "send a non-empty array of seats, each {model, provider?, name?, reasoning?, temperature?, "
                   "max_tokens?, format?, skills?, instructions?}",
         "model": "send the model id as the provider names it, e.g. local/honest-trader or vendor/model",
         "name": "send a string of at most 80 characters (a seat name: 1 to 60)",
         "season_ticks": "send an integer from 10 to 2000 within the plan's ceiling",
         "max_spend_usd": "send a number of US dollars; it is clamped into the plan's range",
         "trials": "send a positive integer: 1 for a single run, more for a series",
         "seed_mode": "send vary or pinned",
         "paired_with": "send the batch_id of an earlier series of yours",
         "grading": "send auto (model and agent seats), all (local seats too) or off",
         "skills": f"send at most {MAX_SKILLS} skill ids (builtin:... or usk_...)",
         "instructions": f"send a string of at most {MAX_INSTRUCTIONS} characters",
         "reasoning": "send off, low, medium or high", "format": "send tools or json",
         "temperature": "send a number from 0 to 2", "max_tokens": "send a positive integer",
         "provider": "send one of " + ", ".join(PROVIDERS) + " (agent: a seat your own program plays)",
         **until_body.HINTS}


def check_run_body(raw: Any) -> dict:
    """Raw body -> the body as given (validated), or the field's own error code."""
    if isinstance(raw, dict):
        for name in ("scenario_id", "roster"):
            if name not in raw:
                raise DomainError("bad_request", f"{name} is required; send it, or fork a run with fork")
    # a seat without a model is bad_roster (the API), once the body's required fields are there at all
    if isinstance(raw, dict) and "scenario_id" in raw and isinstance(raw.get("roster"), list):
        for k, seat in enumerate(raw["roster"]):
            if isinstance(seat, dict) and "model" not in seat:
                raise DomainError("bad_roster", f"roster[{k}]: model is required; {HINTS['model']}")
    return parse(RunBody, raw, codes=CODES, hints=HINTS).model_dump(exclude_unset=True)
