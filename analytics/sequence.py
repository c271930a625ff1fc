"""An anytime-valid confidence sequence for the mean of bounded scores: the hedged-capital betting
sequence of Waudby-Smith and Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1), 2024 (arXiv 2010.09686), section 4: the hedged capital process (their eq. 25-26)
with the predictable plug-in bets of eq. 27 and the running intersection (their section 3).

For every candidate mean m two gamblers start with capital 1/2 each; one bets that the next score
lies above m, the other below, each staking a share of its capital sized from the scores before
(predictable: bet t reads scores 1..t-1 only). Under the true mean neither gambler's wealth is
expected to grow, so by Ville's inequality the chance that their combined capital EVER reaches
1/alpha is at most alpha. The sequence at time t is every m whose capital stayed below 1/alpha,
intersected with the sequence before it: it holds the true mean at every t at once with
probability >= 1 - alpha, whatever rule decides when to stop.

m runs over a grid (GRID steps of the scale) and each bound is widened by one step, as the
authors' own code does (confseq 0.0.11, `betting.hedged_cs` with `cs_from_martingale`; tests
compare the two on fixed data). Pure numpy, no I/O: the service, the benchmark and notebooks
share it.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from analytics import choice, precision

METHOD = "hedged-capital betting confidence sequence"
GRID = 1000          # steps of the scale the candidate means take (confseq's `breaks`)
TRUNCATE = 0.5       # a bet never stakes more than half of what it could lose (the paper's c)
CHUNK_CELLS = 2_000_000  # rows x grid x n cells per block: bounds many series without a huge array
# The estimate's expected_trials: series of the reference population (precision.reference_series) played
# until the sequence is as narrow as asked; this many of them (a trial count's mean moves by under
# one trial beyond it).
REFERENCE_SERIES = 200


@dataclass(frozen=True)
class Sequence:
    """The sequence after the last score: bounds in the metric's units (None before any score)."""

    low: float | None
    high: float | None
    n: int
    method: str = METHOD

    @property
    def half_width(self) -> float | None:
        return None if self.low is None else (self.high - self.low) / 2

    def to_dict(self, digits: int = 2) -> dict:
        def r(v):
            return None if v is None else round(float(v), digits)
        return {"low": r(self.low), "high": r(self.high), "half_width": r(self.half_width), "method": self.method}


def _bets(p: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bet of each step (eq. 27), shape of p (rows, n): it shrinks like
    1/sqrt(t log t) and grows as the scores seen so far vary less. The running mean and variance
    start from one fake observation at 1/2 with variance 1/4, so the first bet reads no score."""
    rows, n = p.shape
    t = np.arange(1, n + 1)
    mu = np.minimum((0.5 + np.cumsum(p, axis=1)) / (t + 1), 1.0)
    sigma2 = (0.25 + np.cumsum((p - mu) ** 2, axis=1)) / (t + 1)
    before = np.concatenate([np.full((rows, 1), 0.25), sigma2[:, :-1]], axis=1)
    # each gambler is tested at alpha/2 (the hedge's weight 1/2): log(1 / (alpha / 2))
    with np.errstate(divide="ignore"):
        lam = np.sqrt(2 * math.log(2 / alpha) / (t * np.log1p(t) * before))
    return np.nan_to_num(lam, nan=0.0, posinf=np.finfo(float).max)


def _kept(p: np.ndarray, lam: np.ndarray, grid: np.ndarray, limit: float) -> np.ndarray:
    """(rows, grid, n): whether candidate mean m is still in the (not yet intersected) set at t."""
    pp, ll, mm = p[:, None, :], lam[:, None, :], grid[None, :, None]
    with np.errstate(divide="ignore"):
        up_bet = np.minimum(ll, TRUNCATE / mm)          # 1 + bet x (p - m) >= 1 - TRUNCATE > 0
        down_bet = np.minimum(ll, TRUNCATE / (1 - mm))
    up = np.cumsum(np.log1p(up_bet * (pp - mm)), axis=2)
    down = np.cumsum(np.log1p(-down_bet * (pp - mm)), axis=2)
    return np.maximum(up, down) + math.log(0.5) < limit


def bounds(x, lo: float = 0.0, hi: float = 100.0, confidence: float = 0.95,
           grid: int = GRID) -> tuple[np.ndarray, np.ndarray]:
    """The sequence after each score: x of shape (n,) or (rows, n), scores in lo..hi, in the order
    they were observed. Returns (low, high) of x's shape, in the scores' units, each the running
    intersection up to that score."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not hi > lo:
        raise ValueError(f"the scale needs hi > lo, got {lo}..{hi}")
    arr = np.asarray(x, dtype=float)
    one = arr.ndim == 1
    arr = arr[None, :] if one else arr
    if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < lo or arr.max() > hi):
        raise ValueError(f"scores must be finite and lie in {lo:g}..{hi:g}")
    rows, n = arr.shape
    alpha = 1.0 - confidence
    p = (arr - lo) / (hi - lo)
    lam = _bets(p, alpha)
    ms = np.linspace(0.0, 1.0, grid + 1)
    step = 1.0 / grid
    low, high = np.zeros((rows, n)), np.ones((rows, n))
    per = max(1, CHUNK_CELLS // max(1, (grid + 1) * n))
    for a in range(0, rows, per):
        kept = _kept(p[a:a + per], lam[a:a + per], ms, math.log(1 / alpha))
        anyk = kept.any(axis=1)
        first = kept.argmax(axis=1)
        last = grid - kept[:, ::-1, :].argmax(axis=1)
        # no candidate kept (possible only off the grid's resolution): claim nothing at that t
        low[a:a + per] = np.where(anyk, np.maximum(0.0, ms[first] - step), 0.0)
        high[a:a + per] = np.where(anyk, np.minimum(1.0, ms[last] + step), 1.0)
    low, high = _intersect(low, high)
    low, high = lo + (hi - lo) * low, lo + (hi - lo) * high
    return (low[0], high[0]) if one else (low, high)


def _intersect(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The running intersection, step by step. It can only come out empty on the miscoverage event
    itself (chance <= alpha); a step that would empty it is skipped rather than crossing the bounds."""
    low, high = low.copy(), high.copy()
    for k in range(1, low.shape[1]):
        a, b = np.maximum(low[:, k], low[:, k - 1]), np.minimum(high[:, k], high[:, k - 1])
        ok = a <= b
        low[:, k], high[:, k] = np.where(ok, a, low[:, k - 1]), np.where(ok, b, high[:, k - 1])
    return low, high


def sequence(x, lo: float = 0.0, hi: float = 100.0, confidence: float = 0.95) -> Sequence:
    """The sequence after the last of these scores (in observed order)."""
    arr = np.asarray(x, dtype=float)
    if arr.size == 0:
        return Sequence(None, None, 0)
    low, high = bounds(arr, lo, hi, confidence)
    return Sequence(float(low[-1]), float(high[-1]), int(arr.size))


def stopping_times(x, half_width: float, lo: float = 0.0, hi: float = 100.0, confidence: float = 0.95) -> np.ndarray:
    """Per row of x (rows, n): the first n at which the sequence's half-width is <= half_width, or
    0 where it never is within the row."""
    low, high = bounds(np.atleast_2d(x), lo, hi, confidence)
    done = (high - low) / 2 <= half_width
    return np.where(done.any(axis=1), done.argmax(axis=1) + 1, 0)


@functools.lru_cache(maxsize=64)
def _reference_half_widths(ceiling: int, reference_sd: float) -> np.ndarray:
    """(REFERENCE_SERIES, ceiling): the sequence's half-width after each trial of the reference
    series, on the 0..100 scale."""
    x = precision.reference_series(ceiling, reference_sd, REFERENCE_SERIES)
    low, high = bounds(x, *choice.SCALE)
    out = (high - low) / 2
    out.flags.writeable = False
    return out


def expected_trials(half_width: float, ceiling: int, reference_sd: float, lo: float = 0.0,
                    hi: float = 100.0) -> int:
    """How many trials a series stopped at half-width <= half_width (in the metric's units, on lo..hi)
    plays on average when its scores spread like the reference population (reference_sd on the
    0..100 scale), at most `ceiling` and at least 2: the estimate's figure."""
    if ceiling < 2:
        raise ValueError(f"a series has at least 2 trials, got a ceiling of {ceiling}")
    widths = _reference_half_widths(int(ceiling), float(reference_sd))
    done = widths <= half_width * (choice.SCALE[1] - choice.SCALE[0]) / (hi - lo)
    played = np.where(done.any(axis=1), done.argmax(axis=1) + 1, ceiling)
    return int(min(ceiling, max(2, math.ceil(float(played.mean())))))
