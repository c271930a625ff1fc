"""Scripted baseline bots (anchors): the policy ids and the populations that expand to them."""
from __future__ import annotations

from engine.rules import POLICIES

POLICY_DESCRIPTIONS = {
    "honest-trader": "Gathers what it lacks, offers fair trades of its surplus, honours what it offers, never raids.",
    "greedy-harvester": "Harvests the most valuable goods in reach, builds and crafts early, accepts only lopsided trades.",
    "aggressive-raider": "Hunts the richest neighbour and raids it; gathers only to stay fed; declines every offer.",
    "random": "Picks a random action with random arguments each time; the floor any agent should beat.",
}
assert tuple(POLICY_DESCRIPTIONS) == POLICIES

POPULATIONS = {
    "anchors-v1": {
        "anchors": list(POLICIES),
        "description": "One of each scripted policy: honest-trader, greedy-harvester, aggressive-raider, random.",
    },
}

MAX_ANCHORS = 8


class AnchorError(ValueError):
    """anchors value that is not policy ids or one population id, or too many bots."""


def listing() -> dict:
    """The anchor listing of the API: { policies: [...], populations: [...] }."""
    return {
        "policies": [{"id": p, "description": d} for p, d in POLICY_DESCRIPTIONS.items()],
        "populations": [{"id": k, "anchors": list(v["anchors"]), "description": v["description"]}
                        for k, v in POPULATIONS.items()],
    }


def all_ids() -> list[str]:
    return list(POLICY_DESCRIPTIONS) + list(POPULATIONS)


def expand(anchors: list[str]) -> list[str]:
    """Policy ids (repeats allowed) or a single population id -> the list of policy ids."""
    if len(anchors) == 1 and anchors[0] in POPULATIONS:
        out = list(POPULATIONS[anchors[0]]["anchors"])
    else:
        for a in anchors:
            if a in POPULATIONS:
                raise AnchorError(f"env.anchors: population '{a}' must be the only entry; "
                                  "send either policy ids or one population id")
            if a not in POLICY_DESCRIPTIONS:
                raise AnchorError(f"env.anchors: unknown anchor '{a}'; known ids: {', '.join(all_ids())}")
        out = list(anchors)
    if len(out) > MAX_ANCHORS:
        raise AnchorError(f"env.anchors: {len(out)} bots after expansion; at most {MAX_ANCHORS} are allowed")
    return out
