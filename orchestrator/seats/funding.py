"""Who pays for a seat, and the launch checks that refuse a roster nobody can pay for.

seat_funding is a pure function over what the account holds: a provider the platform routes (else
bad_provider); local seats are free; a seat whose key the account holds is the account's; else a
platform sponsor key listing the model funds it on a verified account (else email_unverified); else
router_key_required or provider_key_required. launch_funding adds the balance check: the router key's
known balance (balance.py) must cover the estimate's high USD of the account-funded router seats
(router_balance_low); an unknown balance is not checked.
"""
from __future__ import annotations

import json

from orchestrator.seats import keys
from orchestrator.errors import DomainError
from orchestrator.provider_kinds import UNPAID
from orchestrator.seats.limits import configured_cap
from orchestrator.seats.player import Credential
from orchestrator.seats.prices import PriceTable
from orchestrator.seats.seat import resolve_provider, seat_label
from orchestrator.store import runs

ROUTED = keys.ROUTED


def _held(keys) -> dict[str, dict]:
    """Stored keys as provider -> info; accepts `list_keys` rows or such a dict."""
    if isinstance(keys, dict):
        return {p: (v if isinstance(v, dict) else {}) for p, v in keys.items()}
    return {k["provider"]: k for k in keys or []}


def _sponsored(sponsors) -> dict[str, set[str]]:
    """Platform keys as provider -> models; accepts list_keys(platform=True) rows, keys.held(core,
    'platform') or a plain {provider: [models]}."""
    if isinstance(sponsors, dict):
        return {p: set((v.get("models") if isinstance(v, dict) else v) or ()) for p, v in sponsors.items()}
    return {k["provider"]: set(k.get("models") or ()) for k in sponsors or []}


def seat_funding(index: int, seat: dict, *, account_keys, sponsors, email_verified: bool) -> str:
    """"account", "platform" or "free"; or DomainError naming the seat."""
    provider, _ = resolve_provider(index, seat)
    model = seat.get("model")
    label = seat_label(index, seat)
    if provider in UNPAID:  # a scripted policy, or the account's own program: no key
        return "free"
    if provider in _held(account_keys):
        return "account"
    if model in _sponsored(sponsors).get(provider, ()):
        if not email_verified:
            raise DomainError("email_unverified", f"{label}: the platform sponsors this model, and sponsored "
                              "seats need a verified email address; verify the account's email, or store "
                              f"your own {provider} key")
        return "platform"
    if provider == "router":
        raise DomainError("router_key_required", f"{label}: this seat runs through the router and the "
                          "account holds no router key; store one with `studio key set --provider router`")
    raise DomainError("provider_key_required", f"{label}: this seat runs on {provider} and the account holds "
                      f"no {provider} key; store one with `studio key set --provider {provider}`, "
                      "or route the seat through the router")


def launch_funding(roster: list[dict], *, account_keys, sponsors, email_verified: bool,
                   router_balance_usd: float | None = None, estimate: dict | None = None) -> list[str]:
    """Every seat's funding, in roster order; then the router balance against the estimate.

    estimate: the price estimate for this launch (its per-seat high USD)."""
    fundings = [seat_funding(i, s, account_keys=account_keys, sponsors=sponsors, email_verified=email_verified)
                for i, s in enumerate(roster)]
    if router_balance_usd is None or estimate is None:
        return fundings
    charged = [i for i, s in enumerate(roster) if (s.get("provider") or "router") == "router"
               and fundings[i] == "account"]
    need = sum(estimate["seats"][i]["usd"]["high"] for i in charged)
    if charged and router_balance_usd < need:
        seats = ", ".join(seat_label(i, roster[i]) for i in charged)
        raise DomainError("router_balance_low", f"{seats}: the router key's balance ${router_balance_usd:.2f} "
                          f"cannot cover the estimate's high ${need:.2f}; top up the router key, shorten "
                          "the season or use fewer trials")
    return fundings


def credentials(core, account_id: str, roster: list[dict], fundings: list[str]) -> dict[int, Credential]:
    """Decrypted keys for a launch's model seats: the account's own key, or the platform's sponsor key."""
    out = {}
    for i, (seat, funding) in enumerate(zip(roster, fundings)):
        if funding == "free":
            continue
        provider = seat.get("provider") or "router"
        owner = account_id if funding == "account" else keys.PLATFORM
        info = keys.held(core, owner).get(provider) or {}
        out[i] = Credential(keys.plaintext(core, owner, provider), info.get("base_url"), info.get("usd_per_mtok"),
                            keys.private_ok(core, owner, provider))
    return out


def run_credentials(core, run_id: str) -> dict[int, dict]:
    """seat index -> {key, base_url, usd_per_mtok, private_ok, max_concurrent, price} for a run's seats
    that need a key: what the recorder hands a worker in the call (never written on its side)."""
    found = runs.account_and_roster(core.store.conn(), run_id)
    if found is None:
        return {}
    account_id, roster = found
    creds = credentials(core, account_id, roster, [s["funding"] for s in roster])
    cap = configured_cap(core.config)
    table = PriceTable.for_data_dir(core.data_dir)
    return {i: {"key": c.key, "base_url": c.base_url, "usd_per_mtok": c.usd_per_mtok, "private_ok": c.private_ok,
                "max_concurrent": cap, "price": table.row(roster[i].get("provider"), roster[i]["model"])}
            for i, c in creds.items()}
