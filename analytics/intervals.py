"""Interval methods for the mean of a bounded score, vectorised over many samples at once.

Every function takes ``x`` of shape (samples, n), one series of n trials a row, and returns
``(low, high)`` arrays of shape (samples,): the coverage benchmark passes thousands of rows, the
series summary its seats' rows at once, each row's interval the same to the last bit as a one-row
call gives (``row_by_row`` makes the bootstrap's matrix product so too). Bootstrap draws are made as
scipy.stats.bootstrap makes them, so on one row the percentile and BCa intervals equal scipy's with
the same generator. Rows with zero spread get the zero-width interval from every method except the betting
one, which never concludes from n equal values that the mean is exactly that value.
"""
from __future__ import annotations

import numpy as np
# scipy loads its submodules on first use: importing the service stays a second faster
import scipy


def _rows(x) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    return arr[None, :] if arr.ndim == 1 else arr


def t(x, confidence: float = 0.95, lo: float = 0.0, hi: float = 100.0):
    """Student t on the mean. Can leave the scale: see t_clipped."""
    x = _rows(x)
    n = x.shape[1]
    mean = x.mean(axis=1)
    half = scipy.stats.t.ppf((1 + confidence) / 2, n - 1) * x.std(axis=1, ddof=1) / np.sqrt(n)
    return mean - half, mean + half


def t_clipped(x, confidence: float = 0.95, lo: float = 0.0, hi: float = 100.0):
    """Student t cut to the scale. The true mean lies on the scale, so cutting never loses
    coverage; it only drops the impossible part."""
    low, high = t(x, confidence)
    return np.clip(low, lo, hi), np.clip(high, lo, hi)


def arcsine_t(x, confidence: float = 0.95, lo: float = 0.0, hi: float = 100.0):
    """Student t on arcsin(sqrt(p)) of the scaled scores, mapped back with sin^2: bounded by
    construction and wider on the side away from a bound."""
    x = _rows(x)
    p = np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    y = np.arcsin(np.sqrt(p))
    n = x.shape[1]
    centre = y.mean(axis=1)
    half = scipy.stats.t.ppf((1 + confidence) / 2, n - 1) * y.std(axis=1, ddof=1) / np.sqrt(n)
    a = np.clip(centre - half, 0.0, np.pi / 2)
    b = np.clip(centre + half, 0.0, np.pi / 2)
    return lo + (hi - lo) * np.sin(a) ** 2, lo + (hi - lo) * np.sin(b) ** 2


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """How many times each of n trials is drawn into each resample, shape (n_resamples, n): the draws
    scipy.stats.bootstrap makes, ``rng.integers(0, n, (n_resamples, n))``."""
    idx = rng.integers(0, n, (n_resamples, n))
    cells = (np.arange(n_resamples)[:, None] * n + idx).ravel()
    return np.bincount(cells, minlength=n_resamples * n).reshape(n_resamples, n).astype(float)


def _resampled(x: np.ndarray, counts: np.ndarray, row_by_row: bool) -> np.ndarray:
    """Sums of each row's resamples, shape (samples, n_resamples): one matrix product instead of a
    gather per resample. row_by_row: each row's product on its own, as a one-row call computes it. A
    product over many rows sums in another order, so its last bits differ, and a bound that sits on a
    rounding edge (common for scores with few decimals) would round the other way."""
    if row_by_row:
        return np.concatenate([row[None, :] @ counts.T for row in x])
    return x @ counts.T


def boot_means(x, n_resamples: int, rng: np.random.Generator | None, *, counts: np.ndarray | None = None,
               row_by_row: bool = False) -> np.ndarray:
    """Bootstrap means, shape (samples, n_resamples). One draw of indices serves every row (the rows
    are independent data, so sharing the index pattern costs nothing). counts: that draw made
    beforehand (resample_counts); rng is not used then."""
    x = _rows(x)
    n = x.shape[1]
    counts = resample_counts(n, n_resamples, rng) if counts is None else counts
    return _resampled(x, counts, row_by_row) / n


def _row_percentiles(boot: np.ndarray, *qs: np.ndarray) -> list[np.ndarray]:
    """np.percentile's linear rule with one q (0..1) per row, for each of qs. Only the order statistics
    the rule reads are put in place (a partial sort, once for all qs): they are the values a full sort
    puts there, so the result is the same to the last bit."""
    last = boot.shape[1] - 1
    pos = [np.clip(q, 0.0, 1.0) * last for q in qs]
    below = [np.floor(p).astype(int) for p in pos]
    above = [np.minimum(i + 1, last) for i in below]
    kth = np.stack(below + above, axis=1)
    if (kth == kth[0]).all():
        b = np.partition(boot, np.unique(kth[0]), axis=1)
    else:
        b = np.stack([np.partition(row, np.unique(k)) for row, k in zip(boot, kth)])
    rows = np.arange(b.shape[0])
    return [b[rows, i] + (p - i) * (b[rows, j] - b[rows, i]) for p, i, j in zip(pos, below, above)]


def percentile(x, confidence: float = 0.95, lo: float = 0.0, hi: float = 100.0, *,
               n_resamples: int = 2000, rng: np.random.Generator | None = None,
               counts: np.ndarray | None = None, row_by_row: bool = False):
    """Percentile bootstrap: stays within the sample's range, so within the scale."""
    x = _rows(x)
    rng = rng if rng is not None else np.random.default_rng(0)
    boot = boot_means(x, n_resamples, rng, counts=counts, row_by_row=row_by_row)
    alpha = (1 - confidence) / 2
    q = np.full(x.shape[0], alpha)
    low, high = _row_percentiles(boot, q, 1 - q)
    return low, high


def bca(x, confidence: float = 0.95, lo: float = 0.0, hi: float = 100.0, *,
        n_resamples: int = 2000, rng: np.random.Generator | None = None,
        counts: np.ndarray | None = None, row_by_row: bool = False):
    """BCa bootstrap of the mean (Efron & Tibshirani 14.3), as scipy computes it: bias from the
    share of resamples below the mean (ties half), acceleration from the jackknife."""
    x = _rows(x)
    rng = rng if rng is not None else np.random.default_rng(0)
    n = x.shape[1]
    boot = boot_means(x, n_resamples, rng, counts=counts, row_by_row=row_by_row)
    theta = x.mean(axis=1, keepdims=True)
    share = ((boot < theta).sum(axis=1) + (boot <= theta).sum(axis=1)) / (2 * boot.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = scipy.special.ndtri(share)
        jack = (x.sum(axis=1, keepdims=True) - x) / (n - 1)
        u = (n - 1) * (jack.mean(axis=1, keepdims=True) - jack)
        a = (u ** 3).sum(axis=1) / n ** 3 / 6 / ((u ** 2).sum(axis=1) / n ** 2) ** 1.5
        z = scipy.special.ndtri((1 - confidence) / 2)
        q1 = scipy.special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
        q2 = scipy.special.ndtr(z0 + (z0 - z) / (1 - a * (z0 - z)))
    # Constant rows: the jackknife has no spread (a = 0/0); their interval is the point.
    flat = np.ptp(x, axis=1) == 0
    q1, q2 = np.where(flat, 0.5, q1), np.where(flat, 0.5, q2)
    q1, q2 = np.nan_to_num(q1, nan=0.0), np.nan_to_num(q2, nan=1.0)
    low, high = _row_percentiles(boot, q1, q2)
    return low, high


def bootstrap_t(x, confidence: float = 0.95, lo: float = 0.0, hi: float = 100.0, *,
                n_resamples: int = 2000, rng: np.random.Generator | None = None,
                counts: np.ndarray | None = None, row_by_row: bool = False):
    """Studentized (bootstrap-t) interval, cut to the scale: the t statistic's own distribution
    is bootstrapped, so a skewed score gets a lopsided interval. A resample with no spread has
    an infinite t (its sign that of its mean's shift), which widens, never narrows, the interval."""
    x = _rows(x)
    rng = rng if rng is not None else np.random.default_rng(0)
    n = x.shape[1]
    counts = resample_counts(n, n_resamples, rng) if counts is None else counts
    means = _resampled(x, counts, row_by_row) / n
    # resample variance from the counts: E[x^2] - mean^2, with n - 1 in the denominator
    sq = _resampled(x ** 2, counts, row_by_row) / n
    sd = np.sqrt(np.maximum(sq - means ** 2, 0.0) * n / (n - 1))
    mean = x.mean(axis=1, keepdims=True)
    shift = means - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        tstar = np.where(sd > 1e-12 * (hi - lo), shift / (sd / np.sqrt(n)), np.sign(shift) * np.inf)
    alpha = (1 - confidence) / 2
    with np.errstate(invalid="ignore"):  # inf - inf between two infinite t's: NaN, handled below
        q_low, q_high = np.quantile(tstar, [alpha, 1 - alpha], axis=1)
    se = x.std(axis=1, ddof=1) / np.sqrt(n)
    with np.errstate(invalid="ignore"):
        low = mean[:, 0] - q_high * se
        high = mean[:, 0] - q_low * se
    # no spread at all: the zero-width interval, as the other methods give
    low = np.where(se == 0, mean[:, 0], low)
    high = np.where(se == 0, mean[:, 0], high)
    return np.clip(np.nan_to_num(low, nan=lo), lo, hi), np.clip(np.nan_to_num(high, nan=hi), lo, hi)


def _log_capital(p: np.ndarray, lam: np.ndarray, m: np.ndarray, c: float = 0.5) -> np.ndarray:
    """log of the hedged capital after all n bets, for candidate means m of shape (rows, k)."""
    pp, ll, mm = p[:, None, :], lam[:, None, :], m[:, :, None]
    up = np.log1p(np.minimum(ll, c / mm) * (pp - mm)).sum(axis=2)
    down = np.log1p(-np.minimum(ll, c / (1 - mm)) * (pp - mm)).sum(axis=2)
    return np.logaddexp(up, down) + np.log(0.5)


def betting(x, confidence: float = 0.95, lo: float = 0.0, hi: float = 100.0, *,
            coarse: int = 41, steps: int = 20):
    """Hedged-capital betting interval (Waudby-Smith & Ramdas 2023, Theorem 3 with the fixed-n
    bet size of their section 5.1): valid for any distribution on the scale, whatever n.

    For each candidate mean m, two gamblers bet that the next score lies above or below m; m is
    excluded once half their combined capital reaches 1/alpha. The kept set is an interval: a
    coarse grid finds a kept point, bisection each side finds the edges, and each bound is the
    last excluded point (conservative by at most 2^-steps of the scale).
    """
    x = _rows(x)
    p = np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    rows, n = p.shape
    alpha = 1 - confidence
    limit = np.log(1 / alpha)
    # predictable mean and variance estimates: bet i sizes itself on observations before i
    i = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(p, axis=1)) / (i + 1)
    sigma2 = (0.25 + np.cumsum((p - mu) ** 2, axis=1)) / (i + 1)
    sigma2_prev = np.concatenate([np.full((rows, 1), 0.25), sigma2[:, :-1]], axis=1)
    lam = np.sqrt(2 * np.log(2 / alpha) / (n * sigma2_prev))
    eps = 1e-9  # the bets at exactly 0 and 1 are degenerate (c/m); those ends are reached by bisection
    grid = np.linspace(eps, 1 - eps, coarse)
    capital = _log_capital(p, lam, np.broadcast_to(grid, (rows, coarse)))
    kept = capital < limit
    centre = grid[np.argmin(capital, axis=1)]
    # below the kept centre: bisection between an excluded point (or 0) and the centre
    out_low, in_low = np.zeros(rows), centre.copy()
    out_high, in_high = np.ones(rows), centre.copy()
    for _ in range(steps):
        mid = (out_low + in_low) / 2
        ok = _log_capital(p, lam, mid[:, None])[:, 0] < limit
        in_low, out_low = np.where(ok, mid, in_low), np.where(ok, out_low, mid)
        mid = (out_high + in_high) / 2
        ok = _log_capital(p, lam, mid[:, None])[:, 0] < limit
        in_high, out_high = np.where(ok, mid, in_high), np.where(ok, out_high, mid)
    # no coarse point kept (cannot happen for n >= 1 at 95%, but never claim more than we know)
    none = ~kept.any(axis=1)
    low = np.where(none, 0.0, out_low)
    high = np.where(none, 1.0, out_high)
    return lo + (hi - lo) * low, lo + (hi - lo) * high


METHODS = {"t": t, "t_clipped": t_clipped, "arcsine_t": arcsine_t, "percentile": percentile, "bca": bca,
           "bootstrap_t": bootstrap_t, "betting": betting}
BOOTSTRAP = {"percentile", "bca", "bootstrap_t"}
