"""GET /usage: spend by month, by model and per run, split by who paid, plus the allowances."""
from __future__ import annotations

from orchestrator import finite
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.runs.admission import holdings
from orchestrator.runs.admission.admit import SPEND_CAP_RANGE
from orchestrator.store import tokens as store_tokens
from orchestrator.store import usage as store_usage


def usage(core: Core, principal: Principal) -> dict:
    require(principal, "runs:read")
    months: dict[str, dict] = {}
    c = core.store.conn()
    for r in store_usage.by_run(c, principal.account_id):
        m = months.setdefault(r.month, {"usd": {"account": 0.0, "platform": 0.0}, "by_model": [], "runs": []})
        paid = {"account": r.account_usd, "platform": r.platform_usd}
        for k in paid:
            m["usd"][k] += paid[k]
        entry = {"run_id": r.run_id, "name": r.name, "status": r.status,
                 "usd": {k: round(v, 6) for k, v in paid.items()}, "agent_turns": r.agent_turns}
        if not r.intact:
            entry["note"] = finite.note([f"run {r.run_id}'s roster usage"]) + " (counted as 0 here)"
        m["runs"].append(entry)
    for r in store_usage.by_model(c, principal.account_id):
        months[r.month]["by_model"].append(
            {"model": r.model, "provider": r.provider, "funding": r.funding, "agent_turns": r.agent_turns,
             "input_tokens": r.input_tokens, "output_tokens": r.output_tokens, "usd": round(r.usd, 6)})
    out = [{"month": month, "usd": {k: round(v, 6) for k, v in months[month]["usd"].items()},
            "by_model": months[month]["by_model"], "runs": months[month]["runs"]}
           for month in sorted(months, reverse=True)]
    now = core.clock.now_ms()
    t = holdings.turns(c, principal.account_id, now)
    plan = principal.plan
    lo, hi = SPEND_CAP_RANGE.get(plan["id"], (0.05, 50.0))
    tokens = store_tokens.active_count(c, principal.account_id, now)
    return {"months": out, "allowances": {
        "agent_turns": {"used": t["used"], "held": t["held"], "remaining": holdings.remaining(plan, t),
                        "limit": plan["agent_turns_per_month"]},
        "queued_runs": {"used": holdings.active_launches(c, principal.account_id), "limit": plan["queued_runs"]},
        "spend_cap_usd": {"min": lo, "max": hi},
        "access_tokens": {"active": tokens, "limit": plan["access_tokens"]},
        "requests_per_minute": plan["requests_per_minute"],
    }}
