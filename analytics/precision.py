"""What N trials buy: the expected half-width of a series' mean interval, for the estimate of a launch."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

import numpy as np
import scipy

from analytics import intervals
from analytics.choice import SCALE, method_for
from analytics.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, check_confidence

# The estimate's precision figure (precision_half_width) for a bounded metric is the mean half-width
# the summary's own method gives at n trials on this reference population: scores Beta-distributed
# on the 0..100 scale with mean 50 and the reference spread (sd 10: Beta(12, 12) x 100), REFERENCE_SERIES
# series per n. Trial j of every series is drawn from its own seeded generator, so a series of n + 1
# trials extends the series of n and the figure moves with n alone, not with fresh noise.
REFERENCE_MEAN = 50.0
REFERENCE_SERIES = 1000
SINGLE_RUN = "single_run_no_interval"  # the precision method of one trial: a single run has no interval


@dataclass(frozen=True)
class Precision:
    """What N trials buy: the expected 95% half-width of the mean for a metric of spread ``reference_sd``."""

    n: int
    reference_sd: float
    half_width: float | None  # None for one trial: a single run has no interval
    relative: float | None  # half_width / sd, the figure in the shared notes' table
    single_run: float  # z(0.975) * sd: how far one run may land from the true mean
    method: str  # the interval method the figure is the width of (a key of intervals.METHODS), or SINGLE_RUN
    confidence: float = 0.95

    def to_dict(self) -> dict:
        return asdict(self)


def reference_series(n: int, reference_sd: float, series: int = REFERENCE_SERIES) -> np.ndarray:
    """The reference population's series of n trials, shape (series, n): see REFERENCE_MEAN."""
    if not 0 < reference_sd < REFERENCE_MEAN:
        raise ValueError(f"a Beta population with mean {REFERENCE_MEAN:g} needs 0 < sd < {REFERENCE_MEAN:g}, "
                         f"got {reference_sd}")
    p, v = REFERENCE_MEAN / SCALE[1], (reference_sd / SCALE[1]) ** 2
    k = p * (1 - p) / v - 1  # Beta(p k, (1 - p) k) has mean p and variance v
    cols = [np.random.default_rng([DEFAULT_SEED, j]).beta(p * k, (1 - p) * k, series) for j in range(n)]
    return SCALE[0] + (SCALE[1] - SCALE[0]) * np.stack(cols, axis=1)


@functools.lru_cache(maxsize=512)
def _expected_half_width(metric: str, n: int, reference_sd: float, confidence: float) -> tuple[str, float]:
    """(method, mean half-width) of the interval bounded_interval gives at n trials, over the reference
    series: the same function, resamples and seed as the summary's."""
    method = method_for(metric, n)
    x = reference_series(n, reference_sd)
    fn = intervals.METHODS[method]
    if method in intervals.BOOTSTRAP:
        low, high = fn(x, confidence, *SCALE, n_resamples=DEFAULT_RESAMPLES, rng=np.random.default_rng(DEFAULT_SEED))
    else:
        low, high = fn(x, confidence, *SCALE)
    return method, float(np.mean(high - low) / 2)


def precision_half_width(n: int, reference_sd: float, confidence: float = 0.95, *,
                         metric: str | None = None) -> Precision:
    """Half-width of the mean's interval that ``n`` trials buy for a metric whose
    spread between runs is ``reference_sd`` (e.g. measured on an earlier series).

    With ``metric`` one of BOUNDED: the mean half-width of the interval the summary computes for it at
    n trials (CHOICE's method), on the reference population (REFERENCE_MEAN) of that spread, computed
    once per n. Without: the t formula, t(q, n-1) * sd / sqrt(n). One trial has no interval."""
    check_confidence(confidence)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not np.isfinite(reference_sd) or reference_sd < 0:
        raise ValueError(f"reference_sd must be a finite non-negative number, got {reference_sd}")
    q = (1.0 + confidence) / 2.0
    single_run = float(scipy.stats.norm.ppf(q) * reference_sd)
    if n < 2:
        # t with zero degrees of freedom does not exist, nor does any bound from one score.
        return Precision(n, float(reference_sd), None, None, single_run, SINGLE_RUN, confidence)
    if metric is not None:
        method, half = _expected_half_width(metric, n, float(reference_sd), float(confidence))
        relative = half / reference_sd if reference_sd else None
        return Precision(n, float(reference_sd), half, relative, single_run, method, confidence)
    factor = float(scipy.stats.t.ppf(q, n - 1) / np.sqrt(n))
    return Precision(n, float(reference_sd), factor * reference_sd, factor, single_run, "t", confidence)
