"""GET /usage aggregates the rosters in SQL: the same months, models and runs as summing every seat's
usage in Python, over a history spanning months, payers and a run with no seat."""
from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timezone

import pytest

from orchestrator.accounts import create_account
from orchestrator.auth import authenticate, mint
from orchestrator.core import Core
from orchestrator.runs.usage import usage

JAN, FEB = 1767225600000, 1769904000000  # 2026-01-01 and 2026-02-01, UTC


def _seat(model: str, provider: str, funding: str, turns: int, tokens_in: int, tokens_out: int, usd: float) -> dict:
    return {"model": model, "provider": provider, "funding": funding,
            "usage": {"agent_turns": turns, "input_tokens": tokens_in, "output_tokens": tokens_out, "usd": usd}}


RUNS = [  # id, created, finished, roster
    ("run_a", JAN + 5, JAN + 9, [_seat("m1", "router", "platform", 10, 100, 10, 0.001234),
                                 _seat("local/forager", "local", "free", 10, 0, 0, 0.0)]),
    ("run_b", JAN + 50, None, [_seat("m1", "router", "platform", 7, 70, 7, 0.0004),
                               _seat("m2", "openai", "account", 7, 80, 9, 0.0021)]),
    ("run_c", JAN + 60, FEB + 1, [_seat("m2", "openai", "account", 3, 30, 3, 0.0009)]),
    ("run_d", FEB + 70, None, []),
]


def _reference(rows: list[tuple]) -> list[dict]:
    """The aggregation as a loop over parsed rosters, newest run first."""
    months: dict[str, dict] = {}
    for run_id, created, finished, roster in reversed(rows):
        month = datetime.fromtimestamp((finished or created) / 1000, tz=timezone.utc).strftime("%Y-%m")
        m = months.setdefault(month, {"usd": {"account": 0.0, "platform": 0.0}, "models": {}, "runs": []})
        paid = {"account": 0.0, "platform": 0.0}
        for seat in roster:
            if seat["funding"] in paid:
                paid[seat["funding"]] += seat["usage"]["usd"]
            agg = m["models"].setdefault((seat["model"], seat["provider"], seat["funding"]), defaultdict(float))
            for k in ("agent_turns", "input_tokens", "output_tokens", "usd"):
                agg[k] += seat["usage"][k]
        for k in paid:
            m["usd"][k] += paid[k]
        m["runs"].append({"run_id": run_id, "name": run_id, "status": "finished",
                          "usd": {k: round(v, 6) for k, v in paid.items()}, "agent_turns": 5})
    return [{"month": month, "usd": {k: round(v, 6) for k, v in months[month]["usd"].items()},
             "by_model": [{"model": k[0], "provider": k[1], "funding": k[2], "agent_turns": int(v["agent_turns"]),
                           "input_tokens": int(v["input_tokens"]), "output_tokens": int(v["output_tokens"]),
                           "usd": round(v["usd"], 6)} for k, v in sorted(months[month]["models"].items())],
             "runs": months[month]["runs"]} for month in sorted(months, reverse=True)]


@pytest.fixture(scope="module")
def account(tmp_path_factory):
    core = Core.open(tmp_path_factory.mktemp("usage"))
    create_account(core, "u@example.org", verified=True)
    principal = authenticate(core, mint(core, "u@example.org")[0])
    with core.store.write() as c:
        for run_id, created, finished, roster in RUNS:
            c.execute("INSERT INTO runs (id, account_id, launch_id, name, status, scenario_id, scenario_hash, "
                      "scripted, effective, roster, turns_reserved, turns_settled, created_at_ms, finished_at_ms) "
                      "VALUES (?, ?, ?, ?, 'finished', 'base', 'h', 0, '{}', ?, 9, 5, ?, ?)",
                      (run_id, principal.account_id, run_id, run_id, json.dumps(roster), created, finished))
    return core, principal


def test_months_models_and_runs_match_a_loop_over_every_roster(account):
    core, principal = account
    months = usage(core, principal)["months"]
    assert months == _reference(RUNS)
    assert [m["month"] for m in months] == ["2026-02", "2026-01"]
    feb = months[0]
    assert [r["run_id"] for r in feb["runs"]] == ["run_d", "run_c"]  # a run lands in the month it finished
    assert feb["usd"] == {"account": 0.0009, "platform": 0.0}
    assert months[1]["by_model"][0] == {"model": "local/forager", "provider": "local", "funding": "free",
                                        "agent_turns": 10, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}


def test_another_account_sees_none_of_it(account):
    core, _ = account
    create_account(core, "v@example.org", verified=True)
    other = authenticate(core, mint(core, "v@example.org")[0])
    assert usage(core, other)["months"] == []
