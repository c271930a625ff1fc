"""One seat of a roster: its label in messages and its provider, resolved in one place.

A seat's provider defaults to `local` for models `local/<policy>` and to `router` otherwise; it must
be one the platform routes (bad_provider), and a local seat must name a known policy (bad_roster).
Admission and the funding checks both call `resolve_provider`, so a bad seat reads the same wherever
it is caught. Names and their numbering (repeats become "name 2") are the engine's (`seat_specs`).
"""
from __future__ import annotations

from engine.rules import POLICIES
from engine.scenario import local_policy
from orchestrator.errors import DomainError
from orchestrator.provider_kinds import LOCAL
from orchestrator.seats.keys import ROUTED


def seat_label(index: int, seat: dict) -> str:
    return f"roster[{index}] (model {seat.get('model')})"


def resolve_provider(index: int, seat: dict) -> tuple[str, str | None]:
    """(provider, policy): policy is the scripted policy of a local seat, None for model seats."""
    model = seat.get("model") if isinstance(seat.get("model"), str) else ""
    provider = seat.get("provider") or (LOCAL if local_policy(model) is not None else "router")
    if provider not in ROUTED:
        raise DomainError("bad_provider", f"{seat_label(index, seat)}: provider '{provider}' is not routed; "
                          f"send one of {', '.join(ROUTED)}")
    if provider != LOCAL:
        return provider, None
    policy = local_policy(model)
    if policy not in POLICIES:
        raise DomainError("bad_roster", f"{seat_label(index, seat)}: local seats play local/<policy> with a "
                          f"policy among {', '.join(POLICIES)}")
    return provider, policy
