"""Scenarios shipped by the platform, launchable by id. Hashes are computed, never typed in."""
from __future__ import annotations

from engine.hashing import BASE_ID, content_hash

_LIBRARY = [
    {
        "id": BASE_ID, "title": "Custom base world", "kind": "base",
        "description": "The neutral base world every saved scenario builds on: 300 ticks, base resources, "
                       "a fresh map per run, the anchors-v1 population.",
        "season_ticks": 300, "env": {}, "seed_policy": "drawn",
        "roster": {"min_agents": 1, "max_agents": 16}, "anchors": ["anchors-v1"], "turn_based": True,
    },
    {
        "id": "svc:harvest-commons", "title": "Harvest commons", "kind": "benchmark",
        "description": "Plenty of food and wood on a fixed map: measures economy and trade when survival is easy.",
        "season_ticks": 300,
        "env": {"seed": 1101, "resources": {"food": {"max": 2, "regen": 2}, "wood": {"regen": 1.5}},
                "anchors": ["anchors-v1"]},
        "seed_policy": "fixed", "roster": {"min_agents": 1, "max_agents": 8}, "anchors": ["anchors-v1"],
        "turn_based": True,
    },
    {
        "id": "svc:long-winter", "title": "Long winter", "kind": "benchmark",
        "description": "Food regrows at a third of the base rate over a long season: measures survival under scarcity.",
        "season_ticks": 600,
        "env": {"seed": 2202, "resources": {"food": {"regen": 0.33}, "wood": {"max": 0.5}},
                "anchors": ["anchors-v1"]},
        "seed_policy": "fixed", "roster": {"min_agents": 1, "max_agents": 8}, "anchors": ["anchors-v1"],
        "turn_based": True,
    },
    {
        "id": "svc:relic-rush", "title": "Relic rush", "kind": "benchmark",
        "description": "Relics and ore are plentiful and raiders are about: measures exploration and defence.",
        "season_ticks": 400,
        "env": {"seed": 3303, "resources": {"relics": {"max": 3, "regen": 5}, "ore": {"max": 1.5, "regen": 1.5}},
                "anchors": ["anchors-v1"]},
        "seed_policy": "fixed", "roster": {"min_agents": 2, "max_agents": 12}, "anchors": ["anchors-v1"],
        "turn_based": True,
    },
]


def _entry(s: dict) -> dict:
    env = s["env"]
    return {
        "id": s["id"], "title": s["title"], "kind": s["kind"], "description": s["description"],
        "hash": content_hash(BASE_ID, s["season_ticks"], env),
        "season_ticks": s["season_ticks"], "roster": dict(s["roster"]), "seed_policy": s["seed_policy"],
        "turn_based": s["turn_based"], "anchors": list(s["anchors"]),
        "resource_multipliers": {k: dict(v) for k, v in env.get("resources", {}).items()},
    }


LIBRARY: dict[str, dict] = {s["id"]: s for s in _LIBRARY}


def entries() -> list[dict]:
    """Library entries in the API's shape."""
    return [_entry(s) for s in _LIBRARY]


def entry(scenario_id: str) -> dict | None:
    s = LIBRARY.get(scenario_id)
    return _entry(s) if s else None


def definition(scenario_id: str) -> dict | None:
    """The launchable definition behind a library id: season_ticks, env (as given), seed_policy."""
    s = LIBRARY.get(scenario_id)
    if s is None:
        return None
    env = dict(s["env"])
    if "anchors" not in env:
        env["anchors"] = list(s["anchors"])
    return {"season_ticks": s["season_ticks"], "env": env, "seed_policy": s["seed_policy"],
            "roster": dict(s["roster"])}
