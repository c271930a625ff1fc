"""The router key's balance, for the launch check that refuses a launch it cannot cover.

read_balance asks the router's key-info endpoint (GET {base}/key) and falls back to the balance
stored with the key; router_balance does it synchronously for admission, within BALANCE_TIMEOUT_S.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import math

import httpx

from orchestrator.seats import keys
from orchestrator.seats.client import new_client
from orchestrator.seats.keyed import Keyed, OffOrigin
from orchestrator.provider_kinds import spec

BALANCE_TIMEOUT_S = 2.0


async def read_balance(client: httpx.AsyncClient, key: str, *, base_url: str | None = None,
                         stored: float | None = None, timeout_s: float = 5.0) -> float | None:
    """USD left on the router key: GET {base}/key (data.limit_remaining, or data.limit - data.usage)
    when reachable and limited; else the balance stored with the key (None when there is none)."""
    try:
        keyed = Keyed(base_url or spec("router").base_url, {"Authorization": f"Bearer {key}"})
        r = await keyed.send(client, "GET", keyed.url("/key"), timeout=timeout_s)
        r.raise_for_status()
        data = r.json()["data"]
        remaining = data.get("limit_remaining")
        if remaining is None and data.get("limit") is not None:
            remaining = float(data["limit"]) - float(data.get("usage") or 0.0)
        if remaining is not None and math.isfinite(float(remaining)):
            return float(remaining)
    except (httpx.HTTPError, OffOrigin, ValueError, KeyError, TypeError, AttributeError):
        pass
    return stored


def router_balance(core, account_id: str) -> float | None:
    """USD left on the account's router key, or None when unknown (no key, no balance anywhere)."""
    info = keys.held(core, account_id).get("router")
    if info is None:
        return None
    key = keys.plaintext(core, account_id, "router")
    private_ok = keys.private_ok(core, account_id, "router")

    async def read() -> float | None:
        async with new_client(1, private_ok=private_ok) as client:
            return await read_balance(client, key, base_url=info.get("base_url"), stored=info.get("balance_usd"),
                                      timeout_s=BALANCE_TIMEOUT_S)

    # its own thread and loop: callable from sync code and from inside a running event loop alike
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, read()).result()
