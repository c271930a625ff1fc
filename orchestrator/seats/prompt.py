"""What a model seat reads: the system prompt, its scaffold identity and each tick's observation.

The system prompt is the world's rules (the document every seat reads), then the turn section
(TURN_TEXT, one per format, fixed so providers can cache the whole prefix), then, when the seat
carries skills or instructions, "## Your operator's directions" (`compose_directions`): the operator's
text comes last. The scaffold identity is "studio-seat-v1/<format>", plus "+custom.<first 12 hex of
sha256(directions)>" when any direction exists, so equal text gives an equal tag. Each request
carries up to MEMORY_TURNS earlier turns before the current observation, dropped in blocks, so its
size is bounded whatever the season's length.
"""
# The observation (Match.observe(i)) as compact text, one fact per line; lines with nothing to report
# are left out:
#
#     tick 12 of 300; up to 2 actions this turn
#     you: #0 gpt-4o at (10,7); health 100, satiety 48; wood 3, stone 0, food 2, ore 0, relics 0; shelter no, tool no
#     view x 6..14, y 3..11, north at the top, you at the centre:
#     ..T~~....
#     (one row per y)
#     goods: wood 5 at (11,7) (12,7); food 2 at (12,8)
#     agents: #2 honest-trader #1 at (12,8) shelter no, tool yes
#     offers to you: offer 5 from #2: you get 3 wood for 2 food, until tick 20
#     your offers: offer 6 to #3: you give 2 ore for 4 wood, until tick 21
#     messages: #2: Hello!
#     last actions: move ok; gather refused (nothing_here)
from __future__ import annotations

import hashlib

from engine.rules_doc import rules_text
from orchestrator.seats.actions import JSON_REPLY_TEXT

SCAFFOLD = "studio-seat-v1"
FORMATS = ("tools", "json")
DIRECTIONS_HEADING = "Your operator's directions"
MEMORY_TURNS = 4

_LEGEND = """## How to play your turn
Each turn you receive your observation as text, one fact per line:
- "tick T of S; up to N actions this turn";
- "you:" your id, name, position (x,y), health, satiety, stock, shelter and tool;
- "view": the map around you, one character per tile, rows from north (top) to south, you at the
  centre: . grass, T forest, # rock, * berries, o ore vein, R ruins, ~ water, blank off the map;
- "goods": tiles in view holding goods, as: goods amount at (x,y) (x,y) ...;
- "agents": other living agents in view, as #id name at (x,y), with shelter and tool;
- "offers to you" and "your offers": open trade offers with their ids;
- "messages": what others said last tick to you or to all;
- "last actions": your actions of the previous tick, each ok or refused with the reason.
Lines with nothing to report are left out. You also see your last few turns."""

TURN_TEXT = {
    "tools": _LEGEND + "\nAct by calling the tools, one call per action, up to your actions per turn, in the "
                       "order to play them. Calls beyond that number are ignored.",
    "json": _LEGEND + "\n" + JSON_REPLY_TEXT,
}


def compose_directions(skills: list[dict], instructions: str | None) -> str:
    """Skills' texts in order, then the instructions, verbatim, separated by blank lines."""
    parts = [s["text"] for s in skills or []]
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)


def scaffold(format: str, directions: str) -> str:
    """The seat's scaffold identity; equal directions text gives an equal +custom tag."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    base = f"{SCAFFOLD}/{format}"
    if not directions:
        return base
    return f"{base}+custom.{hashlib.sha256(directions.encode('utf-8')).hexdigest()[:12]}"


def skills_record(skills: list[dict]) -> dict:
    """What the public match record shows of a seat's skills: built-ins by id, own skills only counted."""
    ids = [s["id"] for s in skills or []]
    return {"builtin": [i for i in ids if i.startswith("builtin:")],
            "own": sum(1 for i in ids if not i.startswith("builtin:"))}


def system_prompt(format: str, directions: str) -> str:
    """The world's rules, the scaffold's turn section, then the operator's directions (if any)."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    text = rules_text().rstrip("\n") + "\n\n" + TURN_TEXT[format]
    if directions:
        text += f"\n\n## {DIRECTIONS_HEADING}\n\n{directions}"
    return text
