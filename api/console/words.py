"""How the console writes figures for people: a display name for every metric (never a snake_case
field name), numbers with their unit and a sensible precision (counts as integers), and an arena game's
result in words. Registered on the templates by api/console/pages.py."""
from __future__ import annotations

import re

from engine.arena.games import GAMES
from engine.arena.results import ENDS, FLOORS

# metric -> (display name, unit): "%" for 0..100 shares, "share" for 0..1 ones (shown as %), "points"
# for the rubric's 0..100 scores (the unit goes in a table's header, not in every cell), "" for counts
METRICS = {
    "fitness_index": ("Fitness index", "points"),
    "survival": ("Survival", "points"), "economy": ("Economy", "points"), "social": ("Social", "points"),
    "competitiveness": ("Competitiveness", "points"), "exploration": ("Exploration", "points"),
    "crafter_score": ("Crafter score", "points"),
    "accuracy": ("Accuracy", "%"), "acpl": ("Average centipawn loss", "cp"),
    "optimal_rate": ("Optimal moves", "%"), "legal_rate": ("Legal answers", "%"),
    "blunders": ("Blunders", ""), "mistakes": ("Mistakes", ""), "inaccuracies": ("Inaccuracies", ""),
    "win_rate": ("Wins", "share"), "survival_rate": ("Survived", "share"),
    "decision_accuracy": ("Decision accuracy", "%"),
    "mean_regret": ("Mean regret", "points"), "regret": ("Regret", "points"),
    "agent_turns": ("Agent turns", ""), "input_tokens": ("Input tokens", ""), "output_tokens": ("Output tokens", ""),
    "usd": ("Cost", "USD"), "runs": ("Runs", ""), "model": ("Model", ""), "provider": ("Provider", ""),
}
COUNTS = {"blunders", "mistakes", "inaccuracies", "agent_turns", "input_tokens", "output_tokens", "runs"}


def metric_name(name: str) -> str:
    return METRICS.get(name, (name.replace("_", " ").capitalize(), ""))[0]


def metric_head(name: str) -> str:
    """A table column's header: the name, and the unit its cells leave out ('Survival (0-100)')."""
    label, unit = METRICS.get(name, (metric_name(name), ""))
    return f"{label} (0-100)" if unit == "points" else f"{label} ({unit})" if unit == "cp" else label


def figure(value, name: str = "", unit: str | None = None) -> str:
    """A metric's value as a person reads it: '14' blunders, '66.7%', '41.3' (a 0..100 score: its
    header says so), '-' for none."""
    if value is None:
        return "-"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    unit = METRICS.get(name, ("", ""))[1] if unit is None else unit
    if unit == "share":
        value, unit = 100 * value, "%"
    if name in COUNTS or (isinstance(value, int) and unit in ("", "cp")):
        return f"{round(value):,}"
    if unit == "USD":
        return f"{value:,.2f} USD" if value == 0 or abs(value) >= 0.01 else f"{value:.4f} USD"
    return f"{value:,.1f}" + ("%" if unit == "%" else "")


def interval(iv: dict | None, name: str = "") -> str:
    """An interval as 'estimate (low to high)'; 'n/a' where too few observations give none."""
    if not iv or iv.get("estimate") is None:
        return "n/a"
    if iv.get("low") is None or iv.get("high") is None:
        return f"{figure(iv['estimate'], name)} (no interval yet)"
    return f"{figure(iv['estimate'], name)} ({figure(iv['low'], name)} to {figure(iv['high'], name)})"


def game_end(results: dict) -> str:
    """How an arena game ended, in words: 'with four in a row', 'by resignation'."""
    g = results["game"]
    ends = {**GAMES[g["id"]].ends, **ENDS} if g["id"] in GAMES else ENDS
    return ends.get(g["termination"], g["termination"].replace("_", " "))


def game_title(results: dict) -> str:
    g = results["game"]
    return GAMES[g["id"]].title if g["id"] in GAMES else g["id"]


def game_measure(results: dict) -> str:
    """What an arena seat's accuracy (its fitness_index) measures."""
    g = results["game"]
    return GAMES[g["id"]].measure if g["id"] in GAMES else "the quality of its moves"


def action_words(action) -> str:
    """One world action as a person reads it: 'move north', 'accept offer 3', 'offer #2 3 wood for 1 food'."""
    if not isinstance(action, dict):
        return str(action)
    a = dict(action)
    kind = a.pop("action", "?")
    if kind == "move":
        return f"move {a.get('direction', '')}".strip()
    if kind == "offer":
        return f"offer #{a.get('to')} {a.get('give_qty')} {a.get('give')} for {a.get('want_qty')} {a.get('want')}"
    if kind in ("accept", "decline"):
        return f"{kind} offer {a.get('offer_id')}"
    if kind == "raid":
        return f"raid #{a.get('target')}"
    if kind == "say":
        return f"say \"{a.get('text', '')}\"" + (f" to #{a['to']}" if a.get("to") is not None else "")
    return " ".join([kind, *(f"{k.replace('_', ' ')} {v}" for k, v in a.items())])


def turn_words(actions) -> str:
    """A turn's actions in order: 'gather, then move north'; 'wait' for none."""
    return ", then ".join(action_words(a) for a in actions or []) or "wait"


# what an API client is told to send ("send a non-empty array of seats, each {model, ...}"): a form
# has fields for that, so the console leaves such a hint out (a field's path, roster[0].model, stays)
_API_HINT = re.compile(r"[{}]|^send\b")
EMPTY_ROSTER = ("Add a seat before launching: type a model in the Model box of a seat row (for example "
                "local/random, a scripted player), or pick one from the box's list.")


def form_error(message: str) -> str:
    """A builder's refusal as a person reads it: the service's sentence, without the hints about how a
    JSON body is written; a launch with no seat filled in is asked for one in the form's own words."""
    field, _, rest = message.partition(": ")
    if field == "roster" and rest.startswith("should hold at least 1"):
        return EMPTY_ROSTER
    kept = [part for part in message.split("; ") if not _API_HINT.search(part)]
    return "; ".join(kept) or message


def install(env) -> None:
    env.filters.update(metric=metric_name, metric_head=metric_head, figure=figure, interval=interval,
                       turn_words=turn_words)
    env.globals.update(game_end=game_end, game_title=game_title, game_measure=game_measure, GRADE_FLOORS=FLOORS)
