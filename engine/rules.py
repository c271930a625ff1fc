"""The world's rules as one table.

Everything the kernels need is read from here (compiled once into numpy arrays by `rule_arrays`),
and engine/rules_doc.py renders the same numbers into the document every model seat reads as
"the world's own rules". Change a number here and both move together.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

RULES_VERSION = "world-rules-1"

# The RNG state is uint64, but the content hash is RFC 8785 (docs/api.md), defined only for
# integers a JSON double holds exactly (I-JSON, up to 2**53 - 1); larger seeds would also be rounded
# by every JavaScript client. So seeds stop at the largest safe integer, in the engine as in the API.
SEED_MAX = 2**53 - 1

from engine.kernels.codes import (  # noqa: F401  (re-exported: one definition each)
    ACTIONS, DIRECTIONS, EVENT_KINDS, EXTERNAL, ITEMS, N_RES, PARAM_NAMES, POLICIES, REASONS, RESOURCES,
    TERRAINS,
)


# Per resource: base pool size per tile (max), regrowth per tick (regen), price at base.
RESOURCE_TABLE = {
    "wood": {"terrain": "forest", "max": 6.0, "regen": 0.05, "price": 1.0},
    "stone": {"terrain": "rock", "max": 6.0, "regen": 0.03, "price": 1.5},
    "food": {"terrain": "berries", "max": 4.0, "regen": 0.03, "price": 2.0},
    "ore": {"terrain": "ore_vein", "max": 3.0, "regen": 0.01, "price": 4.0},
    "relics": {"terrain": "ruins", "max": 1.0, "regen": 0.002, "price": 25.0},
}

# Per terrain (codes.TERRAINS order): the resource its tiles hold, -1 for none. The kernels index it.
TERRAIN_RES = tuple(
    next((RESOURCES.index(r) for r, row in RESOURCE_TABLE.items() if row["terrain"] == t), -1) for t in TERRAINS
)

# What build and craft make, as Crafter's make:/place: data: the action, the goods it uses (each
# at most once per agent), the item's value in net worth, and what owning it does.
RECIPES = {
    "shelter": {"action": "build", "uses": {"wood": 5, "stone": 3}, "value": 10.0,
                "effect": "raids on you succeed {raid_shelter_penalty} less often"},
    "tool": {"action": "craft", "uses": {"wood": 2, "stone": 1, "ore": 2}, "value": 8.0,
             "effect": "it adds {tool_gather_bonus} to each gather (not relics) and {raid_tool_bonus} "
                       "to your raid odds"},
}

# How long an arena game's seat has for a move unless the run's env says otherwise; a world tick's
# is WORLD["turn_timeout_ms"]. The two defaults of env.turn_timeout_ms, kept together here.
ARENA_TURN_TIMEOUT_MS = 60_000

WORLD = {
    # season and pacing defaults of the base world
    "season_ticks": 300,
    "actions_per_turn": 2,
    "turn_timeout_ms": 30000,
    # map: side grows with the field so crowding stays comparable
    "map_side_min": 24,
    "map_side_per_agent": 2,
    "map_side_max": 64,
    "view_radius": 4,
    "spawn_min_distance": 3,
    # body
    "health_max": 100,
    "satiety_max": 100,
    "start_health": 100,
    "start_satiety": 60,
    "start_food": 3,
    "hunger_per_tick": 1,
    "starve_damage": 5,
    "heal_above_satiety": 50,
    "heal_per_tick": 1,
    "eat_satiety": 25,
    "carry_max": 99,
    # gathering
    "gather_yield": 1,
    "tool_gather_bonus": 1,
    # trading
    "offer_range": 6,
    "offer_ttl": 10,
    "offer_qty_max": 20,
    "open_offers_max": 3,
    # raiding
    "raid_base_odds": 0.5,
    "raid_tool_bonus": 0.15,
    "raid_shelter_penalty": 0.25,
    "raid_odds_min": 0.05,
    "raid_odds_max": 0.95,
    "raid_share_divisor": 3,
    "raid_effort_satiety": 3,
    "raid_fail_satiety": 12,
    # messages
    "say_max_chars": 280,
    # snapshots for trajectories and replays
    "snapshot_every": 10,
}



assert tuple(RECIPES) == ITEMS
assert [RECIPES[item]["action"] for item in ITEMS] == list(ACTIONS[ACTIONS.index("build"):][:len(ITEMS)])


def map_side(n_agents: int) -> int:
    side = WORLD["map_side_min"] + WORLD["map_side_per_agent"] * n_agents
    return int(min(WORLD["map_side_max"], max(WORLD["map_side_min"], side)))


@lru_cache(maxsize=1)
def rule_arrays() -> dict[str, np.ndarray]:
    """The table as lookup arrays for the kernels (read-only by convention)."""
    order = RESOURCES
    return {
        "res_max": np.array([RESOURCE_TABLE[r]["max"] for r in order], dtype=np.float64),
        "res_regen": np.array([RESOURCE_TABLE[r]["regen"] for r in order], dtype=np.float64),
    }


@lru_cache(maxsize=1)
def param_array() -> np.ndarray:
    """WORLD's numbers in the order the kernels index them (codes.PARAM_NAMES), then the prices
    (P_PRICE), the recipes' costs (P_COST, item by item) and the items' values (P_ITEM_VALUE)."""
    prices = [RESOURCE_TABLE[r]["price"] for r in RESOURCES]
    costs = [float(RECIPES[item]["uses"].get(r, 0)) for item in ITEMS for r in RESOURCES]
    values = [RECIPES[item]["value"] for item in ITEMS]
    return np.array([float(WORLD[name]) for name in PARAM_NAMES] + prices + costs + values, dtype=np.float64)


def uses_text(item: str) -> str:
    """What an item's recipe uses, in words: "2 wood, 1 stone and 2 ore"."""
    parts = [f"{q} {r}" for r, q in RECIPES[item]["uses"].items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def effect_text(item: str) -> str:
    """What owning an item does, with the table's numbers."""
    return RECIPES[item]["effect"].format(**WORLD)


def share_text(divisor: int) -> str:
    """A raid's share in words: 3 -> "a third"."""
    return {2: "half", 3: "a third", 4: "a quarter"}.get(int(divisor), f"1/{int(divisor)}")
