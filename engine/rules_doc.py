"""The rules document every model seat reads, rendered from the tables (rules.py, actions.py, rubric.py).

`rules_text()` is the text seats read, rendered once per process; engine/RULES.md is the same text,
committed so people can read it on the forge; a test fails when the file and the tables disagree.
Regenerate it with:

    python -m engine.rules_doc
"""
from __future__ import annotations

import sys
import textwrap
from functools import lru_cache
from pathlib import Path

from engine import rubric
from engine.actions import ACTION_SPECS
from engine.rules import RECIPES, RESOURCE_TABLE, RULES_VERSION, TERRAINS, WORLD

PATH = Path(__file__).with_name("RULES.md")


def _tile(terrain: str) -> str:
    return terrain.replace("_", " ")


def _plural(word: str) -> str:
    return word if word.endswith("s") else {"berries": "berries"}.get(word, word + "s")


def _goods_table() -> str:
    rows = [f"| {r} | {_tile(row['terrain'])} | {row['max']} | {row['regen']} | {row['price']} |"
            for r, row in RESOURCE_TABLE.items()]
    return "\n".join(["| goods | tile | pool size | regrowth per tick | value |", "| --- | --- | --- | --- | --- |",
                      *rows])


def _action_line(name: str) -> str:
    """One action as the document lists it: the name, its arguments, then the table's description."""
    args = ACTION_SPECS[name][1]
    sig = ", ".join(a + ("?" if t.endswith("?") else "") for a, t, _ in args)
    return f"- {name}" + (f" ({sig})" if sig else "") + f": {ACTION_SPECS[name][0]}"


def render() -> str:
    W = WORLD
    tiles = [_plural(_tile(t)) if t not in ("grass", "water") else t for t in TERRAINS]
    grows = ", ".join(f"{_plural(_tile(row['terrain']))} hold {r}" for r, row in RESOURCE_TABLE.items())
    items = " and ".join(f"{item} {row['value']}" for item, row in RECIPES.items())
    weights = ", ".join(f"{w} {d}" for d, w in rubric.WEIGHTS.items())
    grades = ", ".join(f"{g} from {floor}" for floor, g in rubric.GRADES if floor > 0) + ", else F"
    details = {
        "build": "  One per agent.",
        "craft": "  One per agent.",
        "offer": (f"  The agent must be within {W['offer_range']} tiles and you must hold what you give; "
                  f"quantities 1 to {W['offer_qty_max']}; at most {W['open_offers_max']} open offers each. "
                  f"An offer lapses after "
                  f"{W['offer_ttl']} ticks."),
        "accept": "  If either side no longer holds its goods, nothing moves.",
        "raid": (f"  Base odds {W['raid_base_odds']}, between {W['raid_odds_min']} and {W['raid_odds_max']} after "
                 f"tools and shelters. Every raid costs you {W['raid_effort_satiety']} satiety; a failed one costs "
                 f"{W['raid_fail_satiety']} more."),
        "say": f"  At most {W['say_max_chars']} characters; longer text is cut there. Omit to to speak to all.",
    }
    actions = "\n".join(_action_line(n) + ("\n" + details[n] if n in details else "") for n in ACTION_SPECS)
    return _wrap(f"""# The world's rules ({RULES_VERSION})

You are one agent among several on a square map of tiles. The season lasts a fixed number of
ticks. Every tick, each living agent takes up to its allowed number of actions, in an order
shuffled every tick. Your aim: stay alive, grow your wealth, deal well with others, hold your own
in the field, and explore.

## The map
Tiles are {", ".join(tiles[:-1])} or {tiles[-1]}. Water cannot be entered.
Goods grow on tiles: {grows}. Each tile holds a pool that regrows every tick up to its size:

{_goods_table()}

A scenario may multiply pool sizes and regrowth (0 removes them). Relics are rare, valuable and slow.
You see the tiles and agents within {W['view_radius']} tiles of you.

## Your body
You start with {W['start_health']} health, {W['start_satiety']} satiety and {W['start_food']} food. Living costs
{W['hunger_per_tick']} satiety each tick. At 0 satiety you lose {W['starve_damage']} health per tick; with
satiety of {W['heal_above_satiety']} or more you regain {W['heal_per_tick']} health per tick (up to {W['health_max']}).
At 0 health you have starved: you act no more. Eating 1 food restores {W['eat_satiety']} satiety (up to
{W['satiety_max']}). You carry at most {W['carry_max']} of each good.

## Actions
North is up (y - 1), east is right (x + 1).

{actions}

An action that breaks a rule is refused with a reason and changes nothing; it still uses the action.

## Scoring
Five dimensions, each 0 to 100: survival (ticks alive, health at the end), economy (net worth at
the values above, {items}, relative to the richest agent), social (trades closed, distinct
partners, your offers honoured), competitiveness (your standing in the field, raids won and
repelled), exploration (share of the map seen, relics found). Fitness is the blend
{weights}; grades: {grades}. The rank orders the whole field, scripted bots included.
""")


@lru_cache(maxsize=1)
def rules_text() -> str:
    """The rules document every model seat reads (engine/RULES.md), rendered once from the tables."""
    return render()


def _wrap(text: str, width: int = 100) -> str:
    """Long prose lines wrapped for reading as a file; table rows stay whole."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width or line.startswith("|"):
            out.append(line)
        else:
            indent = "  " if line.startswith(("- ", "  ")) else ""
            out.append(textwrap.fill(line, width, subsequent_indent=indent, break_on_hyphens=False))
    return "\n".join(out)


def main(argv: list[str]) -> int:
    """Write engine/RULES.md (or print it with --stdout)."""
    text = render()
    if "--stdout" in argv:
        sys.stdout.write(text)
    else:
        PATH.write_text(text, encoding="utf-8")
        print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
