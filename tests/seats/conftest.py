import asyncio

import numpy as np
import pytest

from engine.kernels.codes import EVENT_KINDS, REASONS
from engine.match import AgentSpec, Match, MatchConfig
from orchestrator.seats import SeatPlayer, new_client
from tests.seats.fake_provider import FakeProvider


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def external_match(n=2, ticks=10, apt=2, anchors=(), seed=3, spawn_seed=4) -> Match:
    agents = [AgentSpec(name=f"s{i}", model=f"m/{i}") for i in range(n)]
    agents += [AgentSpec(name=f"{p} #1", model=f"anchor/{p}", policy=p, anchor=True) for p in anchors]
    return Match(MatchConfig(season_ticks=ticks, seed=seed, spawn_seed=spawn_seed, actions_per_turn=apt,
                             agents=agents))


def base_url(fake: FakeProvider, provider: str) -> str:
    return fake.url if provider == "anthropic" else fake.url + "/v1"


def players_for(fake, client, seats: dict[int, dict], *, timeout_ms=5000, apt=2, key="k-good") -> dict:
    return {i: SeatPlayer(i, s, key=key, client=client, base_url=base_url(fake, s.get("provider") or "router"),
                          turn_timeout_ms=timeout_ms, actions_per_turn=apt) for i, s in seats.items()}


def run(coro):
    return asyncio.run(coro)


async def with_client(fn):
    # a shared pool is fine at test sizes; the doubles listen on the loopback, as an operator's key may
    async with new_client(64, private_ok=True) as client:
        return await fn(client)


def rows_of(match: Match, agent: int, tick: int | None = None) -> list[dict]:
    """The agent's logged action/invalid rows (optionally of one tick), with kind and reason names."""
    cols = match.columns()
    idx = np.nonzero(cols["agent"] == agent)[0]
    out = []
    for r in idx:
        kind = EVENT_KINDS[cols["kind"][r]]
        if kind not in EVENT_KINDS[:12] or (tick is not None and cols["tick"][r] != tick):
            continue
        out.append({"tick": int(cols["tick"][r]), "kind": kind, "ok": int(cols["ok"][r]),
                    "reason": REASONS[cols["reason"][r]], "a": int(cols["a"][r]), "text": cols["text"][r]})
    return out
