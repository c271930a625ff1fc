"""The router key's balance for a launch check, synchronously (orchestrator/runs/funding.py).

The key-info endpoint when reachable within BALANCE_TIMEOUT_S, else the balance stored with the key.
"""
from __future__ import annotations

import asyncio
import concurrent.futures

from orchestrator import keys
from orchestrator.seats.funding import router_balance as _router_balance
from orchestrator.seats.providers import new_client

BALANCE_TIMEOUT_S = 2.0


def router_balance(core, account_id: str) -> float | None:
    """USD left on the account's router key, or None when unknown (no key, no balance anywhere)."""
    info = keys.held(core, account_id).get("router")
    if info is None:
        return None
    key = keys.plaintext(core, account_id, "router")

    async def read() -> float | None:
        async with new_client(1) as client:
            return await _router_balance(client, key, base_url=info.get("base_url"), stored=info.get("balance_usd"),
                                         timeout_s=BALANCE_TIMEOUT_S)

    # its own thread and loop: callable from sync code and from inside a running event loop alike
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, read()).result()
