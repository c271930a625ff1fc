"""GET /usage's sums over an account's runs: per run and per model, by month, split by who paid.

SQLite walks each roster in C (json_each), so a long history costs no Python object per seat.
"""
from __future__ import annotations

from orchestrator.records.usage import ModelSpend, RunSpend
from orchestrator.store.database import Connection

# Month of a run: when it finished, else when it was launched (UTC).
_MONTH = "strftime('%Y-%m', COALESCE(r.finished_at_ms, r.created_at_ms) / 1000, 'unixepoch')"
# a roster an earlier version stored with Infinity or NaN is read with them as null (store.finite_json)
_SEAT = "json_each(CASE WHEN json_valid(r.roster) THEN r.roster ELSE finite_json(r.roster) END) s"
_FUNDING, _USAGE = "json_extract(s.value, '$.funding')", "json_extract(s.value, '$.usage.{}')"
_BY_RUN = f"""
SELECT r.id, r.name, r.status, COALESCE(r.turns_settled, r.turns_reserved) AS agent_turns, {_MONTH} AS month,
       json_valid(r.roster) AS intact,
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


def by_run(c: Connection, account_id: str) -> list[RunSpend]:
    """Newest first."""
    return [RunSpend(month=r["month"], run_id=r["id"], name=r["name"], status=r["status"],
                     agent_turns=r["agent_turns"], account_usd=r["account"], platform_usd=r["platform"],
                     intact=bool(r["intact"]))
            for r in c.execute(_BY_RUN, (account_id,))]


def by_model(c: Connection, account_id: str) -> list[ModelSpend]:
    return [ModelSpend(month=r["month"], model=r["model"], provider=r["provider"], funding=r["funding"],
                       agent_turns=int(r["agent_turns"]), input_tokens=int(r["input_tokens"]),
                       output_tokens=int(r["output_tokens"]), usd=r["usd"])
            for r in c.execute(_BY_MODEL, (account_id,))]
