"""`studio doctor`: find, and with --repair rewrite, numbers an earlier version stored that JSON cannot
carry (Infinity or NaN: an infinite spend, usage, price or turn row). The service reads them as null
with a note (orchestrator.finite) until they are repaired.

Repairs: a run's roster and effective configuration get 0 in place of each such number (usage counts
what was metered), its spend becomes its seats' repaired usage; a turn row's number becomes null; a
nullable money column (a spend cap, a series' budget, a key's balance or prices) becomes NULL; a row
of the data dir's price table (prices.json) is dropped, so the shipped row or the fallback prices it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from orchestrator import finite
from orchestrator.core import Core
from orchestrator.seats.prices import OVERRIDE

# table -> (key column, nullable REAL columns an earlier version may hold as Infinity)
_NULLABLE = {"runs": ("id", ("cap_usd",)), "batches": ("id", ("budget_usd", "min_cap_usd")),
             "provider_keys": ("rowid", ("balance_usd", "usd_per_mtok_in", "usd_per_mtok_out"))}
_NOT_FINITE = "{c} IS NOT NULL AND ABS({c}) > 1e308"  # SQLite keeps NaN as NULL: only infinities remain


def _zeroed(value):
    if isinstance(value, dict):
        return {k: _zeroed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_zeroed(v) for v in value]
    return 0 if isinstance(value, (int, float)) and not isinstance(value, bool) and not finite.finite(value) else value


def _spend(roster: list) -> float:
    return round(sum(float((s.get("usage") or {}).get("usd") or 0) for s in roster if isinstance(s, dict)), 6)


def doctor(core: Core, *, repair: bool = False) -> dict:
    """{found: [{where, what}], repaired: bool}: every stored number JSON cannot carry; with repair, the
    store and the price table rewritten as the module says, in one transaction."""
    c, found, writes = core.store.conn(), [], []
    for r in c.execute("SELECT id, roster, effective, spend_usd FROM runs"):
        roster, bad_roster = finite.loads(r["roster"])
        eff, bad_eff = finite.loads(r["effective"])
        bad_spend = not finite.finite(r["spend_usd"])
        if not (bad_roster or bad_eff or bad_spend):
            continue
        found += [{"where": f"runs {r['id']}", "what": f"roster {p}"} for p in bad_roster]
        found += [{"where": f"runs {r['id']}", "what": f"effective.{p}"} for p in bad_eff]
        found += [{"where": f"runs {r['id']}", "what": "spend_usd"}] if bad_spend else []
        fixed = _zeroed(json.loads(r["roster"]))
        writes.append(("UPDATE runs SET roster = ?, effective = ?, spend_usd = ? WHERE id = ?",
                       (json.dumps(fixed), json.dumps(_zeroed(json.loads(r["effective"]))), _spend(fixed), r["id"])))
    for table, (key, columns) in _NULLABLE.items():
        for col in columns:
            for r in c.execute(f"SELECT {key} AS k FROM {table} WHERE {_NOT_FINITE.format(c=col)}"):
                found.append({"where": f"{table} {r['k']}", "what": col})
                writes.append((f"UPDATE {table} SET {col} = NULL WHERE {key} = ?", (r["k"],)))
    for r in c.execute("SELECT run_id, tick, seat, n, turn FROM run_turns"):
        turn, bad = finite.loads(r["turn"])
        if isinstance(turn, dict) and isinstance(turn.get("actions"), str):  # the actions, as JSON text
            actions, bad_actions = finite.loads(turn["actions"])
            if bad_actions:
                turn["actions"], bad = json.dumps(actions), bad + [f"actions{p}" for p in bad_actions]
        if bad:
            found += [{"where": f"run_turns {r['run_id']} tick {r['tick']} seat {r['seat']}", "what": p} for p in bad]
            writes.append(("UPDATE run_turns SET turn = ? WHERE run_id = ? AND tick = ? AND seat = ? AND n = ?",
                           (json.dumps(turn), r["run_id"], r["tick"], r["seat"], r["n"])))
    prices = Path(core.data_dir) / OVERRIDE
    table = json.loads(prices.read_text(encoding="utf-8")) if prices.exists() else None
    dropped = [m for m, row in (table or {}).get("models", {}).items()
               if not all(finite.finite(x) for x in row)]
    found += [{"where": str(prices), "what": f"models.{m}"} for m in dropped]
    if repair and writes:
        with core.store.write() as w:
            for sql, params in writes:
                w.execute(sql, params)
    if repair and dropped:
        table["models"] = {m: row for m, row in table["models"].items() if m not in dropped}
        tmp = prices.with_suffix(".tmp")
        tmp.write_text(json.dumps(table, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, prices)
    return {"found": found, "repaired": bool(repair and found)}
