"""From a decision's regret to its accuracy and label, and a seat's summary: the numbers of
world-rollouts-1, each with its reason in docs/RUBRIC.md (Decision grading)."""
from __future__ import annotations

import math

GRADER = "world-rollouts-1"

# regret is in fitness points (the rubric's 0..100 scale) at the rollout horizon
ACCURACY_SCALE = 1.0      # accuracy = 100 exp(-regret / ACCURACY_SCALE)
INACCURACY = 0.2          # labels from these regrets on (each includes its floor)
MISTAKE = 0.4
BLUNDER = 2.0
LABELS = ((BLUNDER, "blunder"), (MISTAKE, "mistake"), (INACCURACY, "inaccuracy"))


def accuracy(regret: float) -> float:
    return 100.0 * math.exp(-max(0.0, regret) / ACCURACY_SCALE)


def label(regret: float) -> str | None:
    return next((name for floor, name in LABELS if regret >= floor), None)


def seat_accuracy(turns: list[dict]) -> float:
    """The share of what was at stake in a seat's decisions that its turns kept, 0..100:
    100 (1 - sum of regrets / sum of stakes), a stake being best - worst candidate value. A plain
    mean of per-decision accuracies counts the many turns where nothing much could be won or lost as
    fully as the few that decide a season; 100 when nothing was ever at stake."""
    if any("stake" not in t for t in turns):  # rows graded before stakes were recorded
        return sum(t["accuracy"] for t in turns) / len(turns)
    stake = sum(t["stake"] for t in turns)
    if stake <= 0:
        return 100.0
    return max(0.0, 100.0 * (1.0 - sum(t["regret"] for t in turns) / stake))


def summarize(turns: list[dict], seats) -> dict[int, dict | None]:
    """Per graded seat: {grader, graded, accuracy, mean_regret, inaccuracies, mistakes, blunders}
    over its graded turns (accuracy: `seat_accuracy`; mean_regret: the plain mean); None for a seat
    with none."""
    out = {}
    for seat in seats:
        mine = [t for t in turns if t["seat"] == seat]
        if not mine:
            out[seat] = None
            continue
        labels = [t["label"] for t in mine]
        out[seat] = {
            "grader": GRADER, "graded": len(mine),
            "accuracy": round(seat_accuracy(mine), 2),
            "mean_regret": round(sum(t["regret"] for t in mine) / len(mine), 4),
            "inaccuracies": labels.count("inaccuracy"), "mistakes": labels.count("mistake"),
            "blunders": labels.count("blunder"),
        }
    return out
