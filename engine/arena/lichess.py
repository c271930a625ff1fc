"""lichess's accuracy formulas (lichess.org/page/accuracy), as lichess's own code computes them."""
from __future__ import annotations

import math

CP_CAP = 1000  # centipawns beyond this (and mates) count as this for win%
INACCURACY, MISTAKE, BLUNDER = 5.0, 10.0, 15.0  # win% points lost


def win_percent(cp: float) -> float:
    cp = max(-CP_CAP, min(CP_CAP, cp))
    return 50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)


def move_accuracy(win_before: float, win_after: float) -> float:
    """From the mover's side; +1 is lichess's uncertainty bonus."""
    if win_after >= win_before:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * (win_before - win_after)) - 3.166924740191411
    return max(0.0, min(100.0, raw + 1))


def label(win_before: float, win_after: float, played_best: bool) -> str:
    drop = win_before - win_after
    if drop >= BLUNDER:
        return "blunder"
    if drop >= MISTAKE:
        return "mistake"
    if drop >= INACCURACY:
        return "inaccuracy"
    return "best" if played_best else "good"


def _std(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def game_accuracy(white_wins: list[float], white_first: bool = True) -> tuple[float | None, float | None]:
    """(first mover's, second mover's) game accuracy from the win% series seen from white's side,
    one value per position from the start to the end (len = plies + 1).

    Each move's accuracy is weighted by the volatility (standard deviation) of a window of win%
    around it; the game accuracy is the mean of that weighted mean and the harmonic mean.
    """
    plies = len(white_wins) - 1
    if plies < 1:
        return None, None
    size = max(2, min(8, plies // 10))
    n_lead = max(0, min(size, len(white_wins)) - 2)
    windows = [white_wins[:size]] * n_lead + [white_wins[i:i + size] for i in range(len(white_wins) - size + 1)]
    weights = [max(0.5, min(12.0, _std(w))) for w in windows]
    per_side: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for i in range(plies):
        white_moves = (i % 2 == 0) == white_first
        prev, nxt = white_wins[i], white_wins[i + 1]
        acc = move_accuracy(prev, nxt) if white_moves else move_accuracy(100 - prev, 100 - nxt)
        per_side[white_moves].append((acc, weights[i]))

    def side(moves: list[tuple[float, float]]) -> float | None:
        if not moves:
            return None
        weighted = sum(a * w for a, w in moves) / sum(w for _, w in moves)
        harmonic = 0.0 if any(a <= 0 for a, _ in moves) else len(moves) / sum(1 / a for a, _ in moves)
        return (weighted + harmonic) / 2

    white, black = side(per_side[True]), side(per_side[False])
    return (white, black) if white_first else (black, white)
