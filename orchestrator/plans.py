"""Plan table: the limits docs/api.md lists by default, overridable by the operator in the data dir's config.toml.

    # <data dir>/config.toml
    [plans.free]
    saved_scenarios = 10
    [plans.lab]
    requests_per_minute = 1200
    graded_decisions_per_launch = 500000

Lab's unlimited agent turns are None (null in GET /me, docs/api.md).
"""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path

from orchestrator import finite

CONFIG_NAME = "config.toml"

LIMIT_FIELDS = ("seats_per_run", "ticks_per_run", "agent_turns_per_month", "queued_runs", "series_max_trials",
                "saved_scenarios", "saved_skills", "access_tokens", "requests_per_minute")
# Plan limits beyond the API's table, which GET /me does not report: decisions one launch may ask to
# grade, each about a hundredth of a CPU second
OTHER_LIMITS = ("graded_decisions_per_launch",)

DEFAULT_PLANS: dict[str, dict] = {
    "free": {"name": "Free", "api_access": "read", "access_tokens": 1, "requests_per_minute": 60,
             "saved_scenarios": 5, "saved_skills": 5, "seats_per_run": 4, "ticks_per_run": 300,
             "series_max_trials": 2, "queued_runs": 1, "agent_turns_per_month": 5000,
             "graded_decisions_per_launch": 2400},
    "starter": {"name": "Starter", "api_access": "full", "access_tokens": 3, "requests_per_minute": 120,
                "saved_scenarios": 20, "saved_skills": 20, "seats_per_run": 6, "ticks_per_run": 600,
                "series_max_trials": 4, "queued_runs": 2, "agent_turns_per_month": 12000,
                "graded_decisions_per_launch": 15000},
    "pro": {"name": "Pro", "api_access": "full", "access_tokens": 10, "requests_per_minute": 300,
            "saved_scenarios": 50, "saved_skills": 50, "seats_per_run": 8, "ticks_per_run": 2000,
            "series_max_trials": 10, "queued_runs": 3, "agent_turns_per_month": 60000,
            "graded_decisions_per_launch": 50000},
    "lab": {"name": "Lab", "api_access": "full", "access_tokens": 25, "requests_per_minute": 600,
            "saved_scenarios": 500, "saved_skills": 500, "seats_per_run": 16, "ticks_per_run": 2000,
            "series_max_trials": 50, "queued_runs": 10, "agent_turns_per_month": None,
            "graded_decisions_per_launch": 200000},
}
PLAN_IDS = tuple(DEFAULT_PLANS)


class ConfigError(ValueError):
    """config.toml names an unknown plan or field, or gives a value of the wrong type."""


def read_config(data_dir: str | Path) -> dict:
    path = Path(data_dir) / CONFIG_NAME
    if not path.exists():
        return {}
    with path.open("rb") as f:
        config = tomllib.load(f)
    bad = finite.unfit(config)  # TOML writes inf and nan; no setting means either
    if bad is not None:
        raise ConfigError(f"config.toml: {'.'.join(map(str, bad[0]))} {bad[1]}")
    return config


def load_plans(config: dict) -> dict[str, dict]:
    """The default table with the config's [plans.<id>] overrides applied; each plan gains its id."""
    plans = copy.deepcopy(DEFAULT_PLANS)
    for plan_id, override in (config.get("plans") or {}).items():
        if plan_id not in plans:
            raise ConfigError(f"config.toml: unknown plan '{plan_id}'; plans are {', '.join(PLAN_IDS)}")
        for field, value in override.items():
            if field == "name" and isinstance(value, str):
                pass
            elif field == "api_access" and value in ("read", "full"):
                pass
            elif field in LIMIT_FIELDS + OTHER_LIMITS and type(value) is int and value >= 0:
                pass
            elif field == "agent_turns_per_month" and value == "unlimited":
                value = None
            else:
                raise ConfigError(f"config.toml: plans.{plan_id}.{field} = {value!r} is not a known "
                                  "field with a valid value (limits are non-negative integers)")
            plans[plan_id][field] = value
    for plan_id, plan in plans.items():
        plan["id"] = plan_id
    return plans


def limits(plan: dict) -> dict:
    """The GET /me limits object."""
    return {k: plan[k] for k in LIMIT_FIELDS}
