"""Schemathesis hooks for tests/api/test_schemathesis.py (loaded through SCHEMATHESIS_HOOKS).

Two places where JSON Schema cannot say what the API means, each handled narrowly:
- JSON Schema counts 300.0 as an integer; the API refuses it (wrong JSON types are refused, not
  coerced, and tests/api/test_bounds.py pins that). Generated integral floats are sent as integers.
- A few schema-valid requests are refused by rule, not by shape: an edit of a built-in skill
  (bad_skill), a create past the plan's allowance (too_many_*), and a launch the account cannot
  make (a scenario id that names nothing, a model no key routes, a plan ceiling, a seed rule), and a
  leaderboard asked with neither of its two selectors (scenario_id, game), a run body with neither a
  scenario and roster nor a fork, a fork of a run that cannot be forked, `until` or `budget_usd` on a
  single run, decisions past the plan's grading ceiling; on PostgreSQL, text holding a NUL. Only those
  refusals are accepted.
"""
from __future__ import annotations

import json
from typing import Any

import schemathesis

BY_RULE = {"too_many_scenarios", "too_many_skills",
           # launch rules that a run body's shape cannot express
           "bad_scenario", "bad_roster", "bad_provider", "provider_key_required", "router_key_required",
           "router_balance_low", "email_unverified", "billing_frozen", "unknown_skill", "plan_seats", "plan_ticks",
           "plan_series", "plan_quota", "too_many_runs", "run_history_full", "seed_not_allowed",
           # a fork names an ended world run of the account, and a tick it played (docs/FORKS.md)
           "bad_fork", "unknown_run",
           # until on a single run, or a seat the roster does not have (docs/RUNS.md)
           "bad_until"}
# bad_request refusals by rule on a run body: a budget on a single run (docs/RUNS.md), decisions past the
# plan's grading ceiling; and on a server whose control plane is on PostgreSQL, text holding a NUL, which
# PostgreSQL's text cannot hold (docs/CLUSTER.md)
RULE_MESSAGES = ("budget_usd: only a series", "grading: this launch asks to grade",
                 "a text holds a NUL character")


def _ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return value


@schemathesis.hook
def map_body(context, body):
    return _ints(body)


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    if getattr(failure, "code", None) != "ST202":  # schema-valid request rejected
        return True
    try:
        envelope = json.loads(response.content)
    except ValueError:
        return True
    if envelope.get("error") in BY_RULE:
        return False
    builtin_edit = envelope.get("error") == "bad_skill" and "built-in" in envelope.get("message", "")
    # paired_with must name one of the account's series: a rule, not a shape
    unknown_series = envelope.get("error") == "bad_request" and envelope.get("message", "").startswith("paired_with:")
    # the leaderboard needs scenario_id or game, both optional alone: OpenAPI cannot require one of two
    neither = envelope == {"error": "bad_request", "message": "scenario_id is required"}
    # a run body names a scenario and a roster, or forks a run: OpenAPI cannot require one of two
    nor_fork = envelope.get("error") == "bad_request" and "or fork a run with fork" in envelope.get("message", "")
    by_rule = envelope.get("error") == "bad_request" and envelope.get("message", "").startswith(RULE_MESSAGES)
    return not (builtin_edit or unknown_series or neither or nor_fork or by_rule)
