"""GET /usage's sums over an account's runs: per run and per model, by month, split by who paid.

The database walks each roster itself (SQLite's json_each, PostgreSQL's jsonb), so a long history
costs no Python object per seat.
"""
from __future__ import annotations

from orchestrator.records.usage import ModelSpend, RunSpend
from orchestrator.store import dialect
from orchestrator.store.database import Connection


def _queries(sql) -> tuple[str, str]:
    """(per run, per model) in this dialect's spelling."""
    # Month of a run: when it finished, else when it was launched (UTC).
    month = sql.month("COALESCE(r.finished_at_ms, r.created_at_ms)")
    # a roster an earlier version stored with Infinity or NaN is read with them as null
    seat = sql.elements(sql.doc("r.roster"), "s")
    funding = sql.value("s.value", "funding")

    def usage(key: str) -> str:
        return sql.number("s.value", "usage", key)

    by_run = f"""
SELECT r.id, r.name, r.status, COALESCE(r.turns_settled, r.turns_reserved) AS agent_turns, {month} AS month,
       {sql.valid("r.roster")} AS intact,
       {sql.total(f"CASE WHEN {funding} = 'account' THEN {usage('usd')} END")} AS account,
       {sql.total(f"CASE WHEN {funding} = 'platform' THEN {usage('usd')} END")} AS platform
FROM runs r LEFT JOIN {seat} {sql.on_true} WHERE r.account_id = ? GROUP BY r.seq ORDER BY r.seq DESC"""
    by_model = f"""
SELECT {month} AS month, {sql.value("s.value", "model")} AS model,
       {sql.value("s.value", "provider")} AS provider, {funding} AS funding,
       {sql.total(usage('agent_turns'))} AS agent_turns, {sql.total(usage('input_tokens'))} AS input_tokens,
       {sql.total(usage('output_tokens'))} AS output_tokens, {sql.total(usage('usd'))} AS usd
FROM runs r CROSS JOIN {seat} WHERE r.account_id = ? GROUP BY month, model, provider, funding
ORDER BY model, provider, funding"""
    return by_run, by_model


_QUERIES = {d.name: _queries(d) for d in (dialect.Sqlite, dialect.Postgres)}


def by_run(c: Connection, account_id: str) -> list[RunSpend]:
    """Newest first."""
    return [RunSpend(month=r["month"], run_id=r["id"], name=r["name"], status=r["status"],
                     agent_turns=r["agent_turns"], account_usd=r["account"], platform_usd=r["platform"],
                     intact=bool(r["intact"]))
            for r in c.execute(_QUERIES[dialect.of(c).name][0], (account_id,))]


def by_model(c: Connection, account_id: str) -> list[ModelSpend]:
    return [ModelSpend(month=r["month"], model=r["model"], provider=r["provider"], funding=r["funding"],
                       agent_turns=int(r["agent_turns"]), input_tokens=int(r["input_tokens"]),
                       output_tokens=int(r["output_tokens"]), usd=r["usd"])
            for r in c.execute(_QUERIES[dialect.of(c).name][1], (account_id,))]
