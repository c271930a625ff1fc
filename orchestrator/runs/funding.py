"""Who pays for each seat, and what a launch may cost: admission's view of the seat layer.

Local seats are free and need no key. Model seats are funded by the account's own key for their
provider, or by an operator key that sponsors the model (CONTRACT.md section 6).
"""
from __future__ import annotations

import json

from orchestrator.auth import Principal
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.keys import PLATFORM
from orchestrator.seats import prompt

LOCAL_SCAFFOLD = "local-policy-v1"


def compose_directions(skills: list[dict], instructions: str | None) -> str:
    return prompt.compose_directions(skills, instructions)


def scaffold(provider: str, fmt: str, directions: str) -> str:
    if provider == "local":  # scripted policies read no prompt; their identity is the policy alone
        return LOCAL_SCAFFOLD
    return prompt.scaffold(fmt, directions)


def _held(core: Core, owner: str) -> dict[str, dict]:
    rows = core.store.all("SELECT provider, balance_usd, models FROM provider_keys WHERE owner = ?", (owner,))
    return {r["provider"]: {"balance_usd": r["balance_usd"],
                            "models": json.loads(r["models"]) if r["models"] else []} for r in rows}


def estimate_usd(seats: list[dict], ticks: int, trials: int) -> dict:
    """USD range of the whole launch; local seats cost nothing."""
    model_seats = [s for s in seats if s["provider"] != "local"]
    if not model_seats:
        return {"low": 0.0, "high": 0.0}
    from orchestrator.seats import pricing

    low = high = 0.0
    for s in model_seats:
        lo, hi = pricing.estimate_seat_usd(s["model"], ticks * trials, s.get("max_tokens"), s.get("reasoning"))
        low += lo
        high += hi
    return {"low": round(low, 4), "high": round(high, 4)}


def check(core: Core, principal: Principal, seats: list[dict], usd: dict) -> None:
    """Set each seat's funding or refuse the launch with the provider code naming the seat."""
    own = _held(core, principal.account_id)
    sponsor = _held(core, PLATFORM)
    router_needed = 0.0
    for s in seats:
        label = f"roster[{s['seat']}] (model {s['model']})"
        p = s["provider"]
        if p == "local":
            s["funding"] = "free"
            continue
        if p in own:
            s["funding"] = "account"
            if p == "router":
                router_needed += 1
            continue
        if p in sponsor and s["model"] in sponsor[p]["models"]:
            if not principal.verified:
                raise DomainError("email_unverified", f"{label}: this model is sponsored by the platform, and "
                                  "sponsored seats need a verified email address; verify it or add your own "
                                  f"{p} key")
            s["funding"] = "platform"
            continue
        if p == "router":
            raise DomainError("router_key_required", f"{label}: the seat runs through the router and the account "
                              "holds no router key; add one (studio key set --provider router) or pick a "
                              "provider whose key you hold")
        raise DomainError("provider_key_required", f"{label}: the account holds no {p} key; add one "
                          f"(studio key set --provider {p}) or route the seat through the router")
    if router_needed:
        from orchestrator.seats import pricing

        balance = pricing.router_balance(core, principal.account_id)
        if balance is not None and balance < usd["high"]:
            raise DomainError("router_balance_low", f"the router key's balance (${balance:.2f}) cannot cover this "
                              f"launch's estimate of up to ${usd['high']:.2f}; top it up, cap the spend or "
                              "shorten the run")
