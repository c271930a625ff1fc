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
    """How a seat's losses compare with a blind pick's, 0..100: 100 B / (B + R), R the sum of its
    regrets and B the sum of what a pick at random among each decision's candidates would have lost
    (best value - the candidates' mean). 100: it never lost anything; 50: it lost as much as blind
    picks would have; below 50: more. Weighting by what blind picks lose puts the weight where a
    decision mattered, and the mean of the candidates, unlike the worst of them, is not one
    outlier's; 100 when no decision could lose anything."""
    if any("blind_regret" not in t for t in turns):  # rows graded before blind regrets were recorded
        return sum(t["accuracy"] for t in turns) / len(turns)
    blind = sum(t["blind_regret"] for t in turns)
    lost = sum(t["regret"] for t in turns)
    return 100.0 if blind + lost <= 0 else 100.0 * blind / (blind + lost)


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
