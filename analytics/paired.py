"""Paired comparisons: two seats or configurations played on the same seeds, their mean difference and
the probability that one beats the other."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy

from analytics import intervals
from analytics.choice import DIFFERENCE_METHOD, METHOD_NAMES, SCALE
from analytics.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, check_confidence, degenerate_interval, \
    finite_sample, t_interval


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of ``a`` against ``b`` (positive difference: a is higher)."""

    difference: Interval  # mean of a - b
    prob_improvement: Interval  # P(a > b) + 0.5 P(a = b) on a random shared seed
    mean_a: float | None
    mean_b: float | None
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


def difference_bounds(d, confidence: float = 0.95):
    """Bounds of the mean paired difference of two 0..100 scores, rows of ``d`` being series
    (shape (series, n) or (n,)): DIFFERENCE_METHOD on the -100..100 scale."""
    fn = intervals.METHODS[DIFFERENCE_METHOD]
    if DIFFERENCE_METHOD in intervals.BOOTSTRAP:
        return fn(d, confidence, -SCALE[1], SCALE[1], rng=np.random.default_rng(DEFAULT_SEED))
    return fn(d, confidence, -SCALE[1], SCALE[1])


def _bootstrap_mean_percentile(values: np.ndarray, confidence: float, n_resamples: int, seed: int) -> Interval:
    """Percentile bootstrap of a mean. Used for bounded, discrete statistics
    (probability of improvement) where BCa's jackknife degenerates on ties."""
    degenerate = degenerate_interval(values, confidence)
    if degenerate is not None:
        return degenerate
    res = scipy.stats.bootstrap(
        (values,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low, high = res.confidence_interval
    return Interval(float(values.mean()), float(low), float(high), int(values.size), "percentile bootstrap", confidence)


def paired_comparison(
    a,
    b,
    confidence: float = 0.95,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    bounded: bool = False,
) -> Comparison:
    """Compare two seats or configurations run on the same seeds; a[i] and b[i]
    share seed i. Higher is taken to be better: negate a lower-is-better metric.

    The difference uses DIFFERENCE_METHOD on the per-seed differences (pairing removes
    the seed-to-seed variance both share), bounded to -100..100 when both sides are 0..100
    scores, else the plain t interval. The probability of improvement is the
    paired version of rliable's: the share of seeds where a beats b, ties counting
    half, with a percentile bootstrap over seeds.
    """
    check_confidence(confidence)
    a_arr = finite_sample(a, "a")
    b_arr = finite_sample(b, "b")
    if a_arr.size != b_arr.size:
        raise ValueError(f"a and b must be aligned by seed: lengths {a_arr.size} and {b_arr.size}")
    d = a_arr - b_arr
    difference = degenerate_interval(d, confidence)
    if difference is None and bounded:
        low, high = difference_bounds(d, confidence)
        difference = Interval(float(d.mean()), float(low[0]), float(high[0]), int(d.size),
                              METHOD_NAMES[DIFFERENCE_METHOD], confidence)
    elif difference is None:
        difference = t_interval(d, confidence)
    wins = (a_arr > b_arr) + 0.5 * (a_arr == b_arr)
    prob = _bootstrap_mean_percentile(wins, confidence, n_resamples, seed)
    return Comparison(
        difference=difference,
        prob_improvement=prob,
        mean_a=float(a_arr.mean()) if a_arr.size else None,
        mean_b=float(b_arr.mean()) if b_arr.size else None,
        n=int(a_arr.size),
    )


def skill_uplift(
    with_skill,
    without_skill,
    confidence: float = 0.95,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    bounded: bool = False,
) -> Comparison:
    """One seat's metric with and without a skill across shared seeds: a positive
    difference means the skill helps."""
    return paired_comparison(with_skill, without_skill, confidence, n_resamples=n_resamples, seed=seed,
                             bounded=bounded)
