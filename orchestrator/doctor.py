"""`studio doctor`: find, and with --repair rewrite, numbers an earlier version stored that JSON cannot
carry (Infinity or NaN: an infinite spend, usage, price or turn row). The service reads them as null
with a note until they are repaired.

Repairs: the store's rows as its repairs module says (a run's numbers 0 and its spend recomputed, a
turn's null, a money column NULL); a row of the data dir's price table (prices.json) is dropped, so
the shipped row or the fallback prices it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from orchestrator import finite
from orchestrator.core import Core
from orchestrator.seats.prices import OVERRIDE
from orchestrator.store import repairs


def doctor(core: Core, *, repair: bool = False) -> dict:
    """{found: [{where, what}], repaired: bool}: every stored number JSON cannot carry; with repair, the
    store and the price table rewritten as the module says, in one transaction."""
    found = [f.model_dump() for f in repairs.findings(core.store.conn())]
    prices = Path(core.data_dir) / OVERRIDE
    table = json.loads(prices.read_text(encoding="utf-8")) if prices.exists() else None
    dropped = [m for m, row in (table or {}).get("models", {}).items()
               if not all(finite.finite(x) for x in row)]
    found += [{"where": str(prices), "what": f"models.{m}"} for m in dropped]
    if repair and found:
        with core.store.write() as w:
            repairs.repair(w)
    if repair and dropped:
        table["models"] = {m: row for m, row in table["models"].items() if m not in dropped}
        tmp = prices.with_suffix(".tmp")
        tmp.write_text(json.dumps(table, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, prices)
    return {"found": found, "repaired": bool(repair and found)}
