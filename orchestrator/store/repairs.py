"""Numbers an earlier version stored that JSON cannot carry (Infinity or NaN: an infinite spend, usage,
price or turn row): found, and rewritten. A run's roster and effective configuration get 0 in place of
each such number (usage counts what was metered) and its spend becomes its seats' repaired usage; a
turn row's number becomes null; a nullable money column becomes NULL.
"""
from __future__ import annotations

import json

import orchestrator.finite as finite
from orchestrator.records.repair import Finding
from orchestrator.store.database import Connection

# table -> (key columns, nullable REAL columns an earlier version may hold as Infinity)
_NULLABLE = {"runs": (("id",), ("cap_usd",)), "batches": (("id",), ("budget_usd", "min_cap_usd")),
             "provider_keys": (("owner", "provider"), ("balance_usd", "usd_per_mtok_in", "usd_per_mtok_out"))}
_NOT_FINITE = "{c} IS NOT NULL AND ABS({c}) > 1e308"  # SQLite keeps NaN as NULL: only infinities remain


def _zeroed(value):
    if isinstance(value, dict):
        return {k: _zeroed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_zeroed(v) for v in value]
    return 0 if isinstance(value, (int, float)) and not isinstance(value, bool) and not finite.finite(value) else value


def _spend(roster: list) -> float:
    return round(sum(float((s.get("usage") or {}).get("usd") or 0) for s in roster if isinstance(s, dict)), 6)


def _scan(c: Connection) -> tuple[list[Finding], list[tuple[str, tuple]]]:
    found, writes = [], []
    for r in c.execute("SELECT id, roster, effective, spend_usd FROM runs"):
        roster, bad_roster = finite.loads(r["roster"])
        eff, bad_eff = finite.loads(r["effective"])
        bad_spend = not finite.finite(r["spend_usd"])
        if not (bad_roster or bad_eff or bad_spend):
            continue
        found += [Finding(where=f"runs {r['id']}", what=f"roster {p}") for p in bad_roster]
        found += [Finding(where=f"runs {r['id']}", what=f"effective.{p}") for p in bad_eff]
        found += [Finding(where=f"runs {r['id']}", what="spend_usd")] if bad_spend else []
        fixed = _zeroed(json.loads(r["roster"]))
        writes.append(("UPDATE runs SET roster = ?, effective = ?, spend_usd = ? WHERE id = ?",
                       (json.dumps(fixed), json.dumps(_zeroed(json.loads(r["effective"]))), _spend(fixed), r["id"])))
    for table, (keys, columns) in _NULLABLE.items():
        where = " AND ".join(f"{k} = ?" for k in keys)
        for col in columns:
            for r in c.execute(f"SELECT {', '.join(keys)} FROM {table} WHERE {_NOT_FINITE.format(c=col)}"):
                found.append(Finding(where=f"{table} {'/'.join(map(str, r))}", what=col))
                writes.append((f"UPDATE {table} SET {col} = NULL WHERE {where}", tuple(r)))
    for r in c.execute("SELECT run_id, tick, seat, n, turn FROM run_turns"):
        turn, bad = finite.loads(r["turn"])
        if isinstance(turn, dict) and isinstance(turn.get("actions"), str):  # the actions, as JSON text
            actions, bad_actions = finite.loads(turn["actions"])
            if bad_actions:
                turn["actions"], bad = json.dumps(actions), bad + [f"actions{p}" for p in bad_actions]
        if bad:
            found += [Finding(where=f"run_turns {r['run_id']} tick {r['tick']} seat {r['seat']}", what=p) for p in bad]
            writes.append(("UPDATE run_turns SET turn = ? WHERE run_id = ? AND tick = ? AND seat = ? AND n = ?",
                           (json.dumps(turn), r["run_id"], r["tick"], r["seat"], r["n"])))
    return found, writes


def findings(c: Connection) -> list[Finding]:
    """Every such number in the control plane, in table order."""
    return _scan(c)[0]


def repair(c: Connection) -> list[Finding]:
    """Rewrite every such number as the module says, inside the caller's write transaction; what was found."""
    found, writes = _scan(c)
    for sql, params in writes:
        c.execute(sql, params)
    return found
