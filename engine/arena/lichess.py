"""lichess's accuracy formulas (lichess.org/page/accuracy), as lichess's own code computes them:
lila's modules/analyse WinPercent, AccuracyPercent and Advice, and lila.common.Maths."""
from __future__ import annotations

import math

from chess.engine import Cp, Score

CP_CAP = 1000  # centipawns beyond this (and mates) count as this for win% (lila's Eval.Cp.CEILING)
INACCURACY, MISTAKE, BLUNDER = 5.0, 10.0, 15.0  # win% points lost (Advice's .1 .2 .3 winning chances)
LABELS = ("blunder", "mistake", "inaccuracy")  # worst first


def win_percent(cp: float) -> float:
    cp = max(-CP_CAP, min(CP_CAP, cp))
    return 50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)


def accuracy_of_drop(drop: float) -> float:
    """A move's accuracy from the win% it gave away; +1 is lichess's uncertainty bonus."""
    if drop <= 0:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * drop) - 3.166924740191411
    return max(0.0, min(100.0, raw + 1))


def move_accuracy(win_before: float, win_after: float) -> float:
    """From the mover's side."""
    return accuracy_of_drop(win_before - win_after)


def label_of_drop(drop: float) -> str | None:
    if drop >= BLUNDER:
        return "blunder"
    if drop >= MISTAKE:
        return "mistake"
    if drop >= INACCURACY:
        return "inaccuracy"
    return None


def worst(*labels: str | None) -> str | None:
    return next((label for label in LABELS if label in labels), None)


def _winning_chances(cp: int) -> float:
    """Advice's own curve (multiplier 0.004, not win%'s 0.00368208), on -1..1."""
    cp = max(-CP_CAP, min(CP_CAP, cp))
    return 2 / (1 + math.exp(-0.004 * cp)) - 1


def advice(before: Score, after: Score) -> str | None:
    """lila's Advice for a move, both scores from the mover's side: CpAdvice between two centipawn
    scores (the winning chances lost, in steps of .1 .2 .3), MateAdvice when a mate appears or goes
    (MateCreated judged by the score before, MateLost by the score after; a longer mate is no advice)."""
    if not before.is_mate() and not after.is_mate():
        lost = _winning_chances(before.score()) - _winning_chances(after.score())
        return label_of_drop(50 * lost)
    mate_for = after.is_mate() and after > Cp(0)
    if not before.is_mate() and after.is_mate() and not mate_for:  # MateCreated
        cp = before.score()
        return "inaccuracy" if cp < -999 else "mistake" if cp < -700 else "blunder"
    if before.is_mate() and before > Cp(0) and not mate_for:  # MateLost
        cp = 0 if after.is_mate() else after.score()
        return "inaccuracy" if cp > 999 else "mistake" if cp > 700 else "blunder"
    return None


def _std(xs: list[float]) -> float:
    """Population standard deviation, as lila's Maths.standardDeviation."""
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def weights(white_wins: list[float]) -> list[float]:
    """One weight per move: the standard deviation of white's win% over a window around it, clamped
    0.5..12. Windows hold clamp(plies / 10, 2, 8) positions and slide one ply at a time; the first
    moves, before a whole window has passed, reuse the first window."""
    plies = len(white_wins) - 1
    size = max(2, min(8, plies // 10))
    n_lead = max(0, min(size, len(white_wins)) - 2)
    windows = [white_wins[:size]] * n_lead + [white_wins[i:i + size] for i in range(len(white_wins) - size + 1)]
    return [max(0.5, min(12.0, _std(w))) for w in windows]


def game_accuracy(white_wins: list[float], accuracies: list[float] | None = None,
                  floors: list[float] | None = None) -> tuple[float | None, float | None]:
    """(white's, black's) game accuracy: for each side the mean of its moves' volatility-weighted mean
    accuracy and their harmonic mean (each accuracy counted as at least 1 there, as lila's Maths does).

    white_wins: white's win% at every position from the start (len = plies + 1); accuracies: each
    move's accuracy from its mover's side, else lichess's own from the win% series.
    """
    plies = len(white_wins) - 1
    if plies < 1:
        return None, None
    if accuracies is None:
        accuracies = [move_accuracy(white_wins[i], white_wins[i + 1]) if i % 2 == 0
                      else move_accuracy(100 - white_wins[i], 100 - white_wins[i + 1]) for i in range(plies)]
    per_side: tuple[list, list] = ([], [])
    ws = weights(white_wins)
    if floors is not None:
        ws = [max(w, min(12.0, f)) for w, f in zip(ws, floors)]
    for i, (acc, w) in enumerate(zip(accuracies, ws)):
        per_side[i % 2].append((acc, w))

    def side(moves: list[tuple[float, float]]) -> float | None:
        if not moves:
            return None
        weighted = sum(a * w for a, w in moves) / sum(w for _, w in moves)
        harmonic = len(moves) / sum(1 / max(1.0, a) for a, _ in moves)
        return (weighted + harmonic) / 2

    return side(per_side[0]), side(per_side[1])
