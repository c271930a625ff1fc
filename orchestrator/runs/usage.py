"""GET /usage: spend by month, by model and per run, split by who paid, plus the allowances."""
from __future__ import annotations

import json
import time
from collections import defaultdict
from datetime import datetime, timezone

from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.runs import ledger
from orchestrator.runs.admission import SPEND_CAP_RANGE


def _month(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m")


def usage(core: Core, principal: Principal) -> dict:
    require(principal, "runs:read")
    rows = core.store.all("SELECT id, name, status, roster, created_at_ms, finished_at_ms, turns_reserved, "
                          "turns_settled FROM runs WHERE account_id = ? ORDER BY seq DESC", (principal.account_id,))
    months: dict[str, dict] = {}
    for r in rows:
        m = months.setdefault(_month(r["finished_at_ms"] or r["created_at_ms"]),
                              {"usd": {"account": 0.0, "platform": 0.0}, "models": {}, "runs": []})
        paid = {"account": 0.0, "platform": 0.0}
        for seat in json.loads(r["roster"]):
            u = seat["usage"]
            payer = seat["funding"] if seat["funding"] in paid else None
            if payer:
                paid[payer] += u["usd"]
            key = (seat["model"], seat["provider"], seat["funding"])
            agg = m["models"].setdefault(key, defaultdict(float))
            for k in ("agent_turns", "input_tokens", "output_tokens", "usd"):
                agg[k] += u[k]
        for k in paid:
            m["usd"][k] += paid[k]
        m["runs"].append({"run_id": r["id"], "name": r["name"], "status": r["status"],
                          "usd": {k: round(v, 6) for k, v in paid.items()},
                          "agent_turns": r["turns_settled"] if r["turns_settled"] is not None else r["turns_reserved"]})
    out = []
    for month in sorted(months, reverse=True):
        m = months[month]
        by_model = [{"model": k[0], "provider": k[1], "funding": k[2],
                     "agent_turns": int(v["agent_turns"]), "input_tokens": int(v["input_tokens"]),
                     "output_tokens": int(v["output_tokens"]), "usd": round(v["usd"], 6)}
                    for k, v in sorted(m["models"].items())]
        out.append({"month": month, "usd": {k: round(v, 6) for k, v in m["usd"].items()}, "by_model": by_model,
                    "runs": m["runs"]})
    c = core.store.conn()
    t = ledger.turns(c, principal.account_id)
    plan = principal.plan
    lo, hi = SPEND_CAP_RANGE.get(plan["id"], (0.05, 50.0))
    now = int(time.time() * 1000)
    tokens = c.execute("SELECT COUNT(*) FROM tokens WHERE account_id = ? AND revoked_at_ms IS NULL AND "
                       "(expires_at_ms IS NULL OR expires_at_ms > ?)", (principal.account_id, now)).fetchone()[0]
    return {"months": out, "allowances": {
        "agent_turns": {"used": t["used"], "held": t["held"], "remaining": ledger.remaining(plan, t),
                        "limit": plan["agent_turns_per_month"]},
        "queued_runs": {"used": ledger.active_launches(c, principal.account_id), "limit": plan["queued_runs"]},
        "spend_cap_usd": {"min": lo, "max": hi},
        "access_tokens": {"active": tokens, "limit": plan["access_tokens"]},
        "requests_per_minute": plan["requests_per_minute"],
    }}
