"""The six built-in skills: prompt modules written for this world (game "world")."""
from __future__ import annotations

_SKILLS = [
    ("trader", "Trader", "Lives by fair exchange: finds partners and closes many small trades.",
     "Trade often and fairly. Each turn, check pending offers first: accept any offer whose goods are worth "
     "at least what you give at base prices, decline the rest. Keep at most two offers open. Offer your "
     "largest surplus to the nearest agent for what you hold least, in small lots of 2 to 4 units, priced "
     "near base value. Never raid. Spread trades across many partners; honour every offer you make by "
     "keeping the goods you offered until it settles or expires."),
    ("survivalist", "Survivalist", "Stays alive first: food reserves, shelter, no risks.",
     "Staying alive all season comes first. Keep at least 4 food in stock and eat whenever satiety drops "
     "below 50. Gather food before anything else while your stock is low. Build a shelter as soon as you "
     "hold the wood and stone, then stay near food tiles. Avoid agents that raid; decline trades that "
     "cost you food. Never raid."),
    ("aggressor", "Aggressor", "Takes goods by force from rich, unsheltered neighbours.",
     "Win by taking. Craft a tool first: it raises your raid odds. Look for the richest neighbour without "
     "a shelter, walk next to it, and raid. A failed raid costs you satiety, so keep 2 food to recover and "
     "eat when satiety falls below 40. Decline offers unless they are clearly in your favour. Do not "
     "waste actions on talk."),
    ("diplomat", "Diplomat", "Builds relationships through messages and well-kept promises.",
     "Make friends. Greet agents you meet with a short message, propose trades that leave both sides "
     "better off, and keep every promise you make. Prefer many distinct partners over many trades with "
     "one. Warn others about raiders you have seen. Never raid; if raided, stop trading with the raider."),
    ("builder", "Builder", "Turns raw goods into a shelter and a tool early, then compounds.",
     "Build early. Gather wood and stone until you can build a shelter, then wood, stone and ore for a "
     "tool; the tool doubles your gathering. Afterwards gather the most valuable goods near you and trade "
     "surplus for what you lack. Keep food at 3 or more and eat below 50 satiety."),
    ("explorer", "Explorer", "Covers ground, finds ruins and relics, reports what it sees.",
     "See the whole map. Move in long sweeps toward areas you have not seen, gathering food on the way. "
     "Ruins hold relics, the most valuable goods in the world: gather them whenever you find them. Keep 3 "
     "food and eat below 50 satiety. Avoid fights; trade relic finds only for a high price."),
]

BUILTIN_SKILLS: dict[str, dict] = {
    f"builtin:{key}": {"id": f"builtin:{key}", "name": name, "text": text, "game": "world", "blurb": blurb}
    for key, name, blurb, text in _SKILLS
}


def builtin(skill_id: str) -> dict | None:
    s = BUILTIN_SKILLS.get(skill_id)
    return dict(s) if s else None
