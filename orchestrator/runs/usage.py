"""GET /usage: spend by month, by model and per run, split by who paid, plus the allowances."""
from __future__ import annotations

from orchestrator import finite
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.runs.admission import holdings
from orchestrator.runs.admission.admit import SPEND_CAP_RANGE


# Month of a run: when it finished, else when it was launched (UTC).
_MONTH = "strftime('%Y-%m', COALESCE(r.finished_at_ms, r.created_at_ms) / 1000, 'unixepoch')"
# a roster an earlier version stored with Infinity or NaN is read with them as null (store.finite_json)
_SEAT = "json_each(CASE WHEN json_valid(r.roster) THEN r.roster ELSE finite_json(r.roster) END) s"
_FUNDING, _USAGE = "json_extract(s.value, '$.funding')", "json_extract(s.value, '$.usage.{}')"
# SQLite walks each roster in C (json_each), so a long history costs no Python object per seat.
_BY_RUN = f"""
SELECT r.id, r.name, r.status, r.turns_settled, r.turns_reserved, {_MONTH} AS month, json_valid(r.roster) AS intact,
       TOTAL(CASE WHEN {_FUNDING} = 'account' THEN {_USAGE.format('usd')} END) AS account,
       TOTAL(CASE WHEN {_FUNDING} = 'platform' THEN {_USAGE.format('usd')} END) AS platform
FROM runs r LEFT JOIN {_SEAT} WHERE r.account_id = ? GROUP BY r.seq ORDER BY r.seq DESC"""
_BY_MODEL = f"""
SELECT {_MONTH} AS month, json_extract(s.value, '$.model') AS model,
       json_extract(s.value, '$.provider') AS provider, {_FUNDING} AS funding,
       TOTAL({_USAGE.format('agent_turns')}) AS agent_turns, TOTAL({_USAGE.format('input_tokens')}) AS input_tokens,
       TOTAL({_USAGE.format('output_tokens')}) AS output_tokens, TOTAL({_USAGE.format('usd')}) AS usd
FROM runs r, {_SEAT} WHERE r.account_id = ? GROUP BY month, model, provider, funding
ORDER BY model, provider, funding"""


def usage(core: Core, principal: Principal) -> dict:
    require(principal, "runs:read")
    months: dict[str, dict] = {}
    for r in core.store.all(_BY_RUN, (principal.account_id,)):
        m = months.setdefault(r["month"], {"usd": {"account": 0.0, "platform": 0.0}, "by_model": [], "runs": []})
        paid = {"account": r["account"], "platform": r["platform"]}
        for k in paid:
            m["usd"][k] += paid[k]
        entry = {"run_id": r["id"], "name": r["name"], "status": r["status"],
                 "usd": {k: round(v, 6) for k, v in paid.items()},
                 "agent_turns": r["turns_settled"] if r["turns_settled"] is not None else r["turns_reserved"]}
        if not r["intact"]:
            entry["note"] = finite.note([f"run {r['id']}'s roster usage"]) + " (counted as 0 here)"
        m["runs"].append(entry)
    for r in core.store.all(_BY_MODEL, (principal.account_id,)):
        months[r["month"]]["by_model"].append(
            {"model": r["model"], "provider": r["provider"], "funding": r["funding"],
             "agent_turns": int(r["agent_turns"]), "input_tokens": int(r["input_tokens"]),
             "output_tokens": int(r["output_tokens"]), "usd": round(r["usd"], 6)})
    out = [{"month": month, "usd": {k: round(v, 6) for k, v in months[month]["usd"].items()},
            "by_model": months[month]["by_model"], "runs": months[month]["runs"]}
           for month in sorted(months, reverse=True)]
    c = core.store.conn()
    now = core.clock.now_ms()
    t = holdings.turns(c, principal.account_id, now)
    plan = principal.plan
    lo, hi = SPEND_CAP_RANGE.get(plan["id"], (0.05, 50.0))
    tokens = c.execute("SELECT COUNT(*) FROM tokens WHERE account_id = ? AND revoked_at_ms IS NULL AND "
                       "(expires_at_ms IS NULL OR expires_at_ms > ?)", (principal.account_id, now)).fetchone()[0]
    return {"months": out, "allowances": {
        "agent_turns": {"used": t["used"], "held": t["held"], "remaining": holdings.remaining(plan, t),
                        "limit": plan["agent_turns_per_month"]},
        "queued_runs": {"used": holdings.active_launches(c, principal.account_id), "limit": plan["queued_runs"]},
        "spend_cap_usd": {"min": lo, "max": hi},
        "access_tokens": {"active": tokens, "limit": plan["access_tokens"]},
        "requests_per_minute": plan["requests_per_minute"],
    }}
