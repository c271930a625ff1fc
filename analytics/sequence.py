"""An anytime-valid confidence sequence for the mean of bounded scores: the hedged-capital betting
sequence of Waudby-Smith and Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1), 2024 (arXiv 2010.09686), section 4: for every candidate mean two gamblers bet, with
predictable bets, that the next score lies above or below it; by Ville's inequality the chance that
their capital EVER reaches 1/alpha under the true mean is at most alpha, so the candidates left (and
their running intersection) hold the mean at every n at once, whatever rule decides when to stop.

Untuned, the bets are eq. 27's (shrinking like 1/sqrt(t log t)); with a target half-width they are
the predictable mixture tuned for the trial count that target asks for (the authors' `fixed_n`).
Checked against the authors' code (confseq, betting.betting_cs) on fixed data in the tests.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from analytics import choice, precision

METHOD = "hedged-capital betting confidence sequence"
GRID = 1000          # steps of the scale the candidate means take (confseq's `breaks`)
TRUNCATE = 0.5       # untuned: a bet never stakes more than half of what it could lose (the paper's c)
# Tuned to a target, scores spread far less than the scale allows (sd about a tenth of it), so the
# bets the target asks for hit the cap c/m; a higher cap is still a valid bet (any c < 1 is) and
# stops the world's series sooner (docs/RUBRIC.md has the comparison).
TUNED_TRUNCATE = 0.9
# The spread the tuned bets are sized for before the scores say otherwise, as a share of the scale:
# the estimate's reference spread (sd 10 on 0..100).
REFERENCE_SPREAD = 0.1
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


def _bets(p: np.ndarray, alpha: float, tuned_n: float | None = None) -> np.ndarray:
    """The predictable plug-in bet of each step, shape of p (rows, n): eq. 27's, shrinking like
    1/sqrt(t log t), or with tuned_n the bet that narrows the sequence most at that n (confseq's
    lambda_predmix_eb with fixed_n); both grow as the scores seen so far vary less. The running mean
    and variance start from one fake observation at 1/2 with variance 1/4, so the first bet reads
    no score."""
    rows, n = p.shape
    t = np.arange(1, n + 1)
    mu = np.minimum((0.5 + np.cumsum(p, axis=1)) / (t + 1), 1.0)
    sigma2 = (0.25 + np.cumsum((p - mu) ** 2, axis=1)) / (t + 1)
    before = np.concatenate([np.full((rows, 1), 0.25), sigma2[:, :-1]], axis=1)
    # each gambler is tested at alpha/2 (the hedge's weight 1/2): log(1 / (alpha / 2))
    with np.errstate(divide="ignore"):
        horizon = t * np.log1p(t) if tuned_n is None else tuned_n
        lam = np.sqrt(2 * math.log(2 / alpha) / (horizon * before))
    return np.nan_to_num(lam, nan=0.0, posinf=np.finfo(float).max)


def _kept(p: np.ndarray, lam: np.ndarray, grid: np.ndarray, limit: float, truncate: float) -> np.ndarray:
    """(rows, grid, n): whether candidate mean m is still in the (not yet intersected) set at t."""
    pp, ll, mm = p[:, None, :], lam[:, None, :], grid[None, :, None]
    with np.errstate(divide="ignore"):
        up_bet = np.minimum(ll, truncate / mm)          # 1 + bet x (p - m) >= 1 - truncate > 0
        down_bet = np.minimum(ll, truncate / (1 - mm))
    up = np.cumsum(np.log1p(up_bet * (pp - mm)), axis=2)
    down = np.cumsum(np.log1p(-down_bet * (pp - mm)), axis=2)
    return np.maximum(up, down) + math.log(0.5) < limit


def tuned_n(half_width: float, lo: float = 0.0, hi: float = 100.0, confidence: float = 0.95) -> float:
    """The trial count a target half-width asks for, which the bets are tuned for: where a fixed
    bet reaches the target when scores spread REFERENCE_SPREAD of the scale. Fixed before any score,
    so the bets stay predictable."""
    if not (math.isfinite(half_width) and half_width > 0):
        raise ValueError(f"half_width must be a finite number above 0, got {half_width}")
    # a target as wide as the scale is met at once; one so narrow that its square underflows (any number
    # above 0 is a valid target) is held where the count stays finite: no series reaches either
    h = min(max(half_width / (hi - lo), 1e-150), 1.0)
    return max(1.0, 2 * math.log(2 / (1 - confidence)) * REFERENCE_SPREAD ** 2 / h ** 2)


def bounds(x, lo: float = 0.0, hi: float = 100.0, confidence: float = 0.95,
           grid: int = GRID, *, half_width: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The sequence after each score: x of shape (n,) or (rows, n), scores in lo..hi, in the order
    they were observed. Returns (low, high) of x's shape, in the scores' units, each the running
    intersection up to that score. half_width: the target (in the scores' units) the bets are
    tuned for; None for the untuned sequence."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not hi > lo:
        raise ValueError(f"the scale needs hi > lo, got {lo}..{hi}")
    horizon = None if half_width is None else tuned_n(half_width, lo, hi, confidence)
    truncate = TRUNCATE if half_width is None else TUNED_TRUNCATE
    arr = np.asarray(x, dtype=float)
    one = arr.ndim == 1
    arr = arr[None, :] if one else arr
    if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < lo or arr.max() > hi):
        raise ValueError(f"scores must be finite and lie in {lo:g}..{hi:g}")
    rows, n = arr.shape
    alpha = 1.0 - confidence
    p = (arr - lo) / (hi - lo)
    lam = _bets(p, alpha, horizon)
    ms = np.linspace(0.0, 1.0, grid + 1)
    step = 1.0 / grid
    low, high = np.zeros((rows, n)), np.ones((rows, n))
    per = max(1, CHUNK_CELLS // max(1, (grid + 1) * n))
    for a in range(0, rows, per):
        kept = _kept(p[a:a + per], lam[a:a + per], ms, math.log(1 / alpha), truncate)
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


def sequence(x, lo: float = 0.0, hi: float = 100.0, confidence: float = 0.95, *,
             half_width: float | None = None) -> Sequence:
    """The sequence after the last of these scores (in observed order), its bets tuned for
    half_width when given (see bounds)."""
    arr = np.asarray(x, dtype=float)
    if arr.size == 0:
        return Sequence(None, None, 0)
    low, high = bounds(arr, lo, hi, confidence, half_width=half_width)
    return Sequence(float(low[-1]), float(high[-1]), int(arr.size))


def stopping_times(x, half_width: float, lo: float = 0.0, hi: float = 100.0, confidence: float = 0.95) -> np.ndarray:
    """Per row of x (rows, n): the first n at which the sequence, its bets tuned for half_width, is
    at most half_width wide on each side, or 0 where it never is within the row."""
    low, high = bounds(np.atleast_2d(x), lo, hi, confidence, half_width=half_width)
    done = (high - low) / 2 <= half_width
    return np.where(done.any(axis=1), done.argmax(axis=1) + 1, 0)


@functools.lru_cache(maxsize=64)
def _reference_half_widths(ceiling: int, reference_sd: float, target: float) -> np.ndarray:
    """(REFERENCE_SERIES, ceiling): the half-width after each trial of the reference series of the
    sequence tuned for target, all on the 0..100 scale."""
    x = precision.reference_series(ceiling, reference_sd, REFERENCE_SERIES)
    low, high = bounds(x, *choice.SCALE, half_width=target)
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
    target = half_width * (choice.SCALE[1] - choice.SCALE[0]) / (hi - lo)
    widths = _reference_half_widths(int(ceiling), float(reference_sd), float(target))
    done = widths <= target
    played = np.where(done.any(axis=1), done.argmax(axis=1) + 1, ceiling)
    return int(min(ceiling, max(2, math.ceil(float(played.mean())))))
