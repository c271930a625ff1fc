"""Intervals of a series of trials: a metric's mean (by the method chosen for it) and a rate's; the
paired comparisons, the launch estimate's precision and interquartile means build on the Interval and
the checks here. Pure functions over numpy arrays, so notebooks, the series summary and the API all
go through the same path. Degenerate inputs never raise: an interval that cannot be computed has
``low = high = None`` rather than NaN, because these results end up in JSON, where NaN is not valid;
constant data gives the zero-width interval ``low = high = estimate``. Bootstrap intervals use a
fixed seed by default, so a report re-run gives the same interval.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, fields
from typing import Sequence

import numpy as np
# scipy loads its submodules on first use: importing the service stays a second faster
import scipy

from analytics import intervals
from analytics.choice import BCA_MIN_N, BOUNDED, METHOD_NAMES, SCALE, method_for

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided interval."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    confidence: float = 0.95

    def to_dict(self) -> dict:
        # every field is a plain value: asdict's deep copy of each would only cost time (a summary has
        # hundreds of intervals)
        return {f.name: getattr(self, f.name) for f in _INTERVAL_FIELDS}


_INTERVAL_FIELDS = fields(Interval)


def finite_sample(x, name: str = "x") -> np.ndarray:
    """Validate a sample: 1-D, float, finite. NaN is refused, not dropped, so a
    missing value upstream shows up as an error instead of a silently smaller n."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def degenerate_interval(arr: np.ndarray, confidence: float) -> Interval | None:
    """The cases no interval method can handle: empty, single, constant."""
    n = arr.size
    if n == 0:
        return Interval(None, None, None, 0, "empty", confidence)
    value = float(arr[0])
    if n == 1:
        return Interval(value, None, None, 1, "single observation", confidence)
    if np.ptp(arr) == 0.0:
        # Zero spread: t and the bootstrap both divide by zero; the honest answer
        # is the zero-width interval.
        return Interval(value, value, value, n, "constant", confidence)
    return None


def t_interval(arr: np.ndarray, confidence: float, method: str = "t") -> Interval:
    degenerate = degenerate_interval(arr, confidence)
    if degenerate is not None:
        return degenerate
    mean = float(np.mean(arr))
    low, high = scipy.stats.t.interval(confidence, df=arr.size - 1, loc=mean, scale=scipy.stats.sem(arr))
    return Interval(mean, float(low), float(high), int(arr.size), method, confidence)


def bounded_interval(x, metric: str, confidence: float = 0.95, *, n_resamples: int = DEFAULT_RESAMPLES,
                     seed: int = DEFAULT_SEED) -> Interval:
    """Mean of a 0..100 score over trials with the method CHOICE names for this metric and n.
    Bounds stay within 0..100; one trial or none gives no bounds."""
    return bounded_intervals([x], metric, confidence, n_resamples=n_resamples, seed=seed)[0]


@functools.lru_cache(maxsize=16)
def _counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The resample draw of a fresh generator seeded ``seed``: the same for every bootstrap interval
    of n trials, so the metrics of a summary (and the series of the same size) draw it once."""
    counts = intervals.resample_counts(n, n_resamples, np.random.default_rng(seed))
    counts.flags.writeable = False
    return counts


def bounded_intervals(samples, metric: str | Sequence[str], confidence: float = 0.95, *,
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> list[Interval]:
    """bounded_interval of each sample (e.g. each seat's scores of each metric), each the same Interval
    to the last bit as its own call gives. metric: one for every sample, or one per sample."""
    check_confidence(confidence)
    arrs = [finite_sample(x) for x in samples]
    metrics = _per_sample(metric, len(arrs))
    for arr, m in zip(arrs, metrics):
        if arr.size and (arr.min() < SCALE[0] or arr.max() > SCALE[1]):
            raise ValueError(f"{m} scores must lie in {SCALE[0]:g}..{SCALE[1]:g}")
    return _bounded(arrs, metrics, confidence, n_resamples, seed)


def _per_sample(metric, samples: int) -> list:
    metrics = [metric] * samples if metric is None or isinstance(metric, str) else list(metric)
    if len(metrics) != samples:
        raise ValueError(f"{samples} samples but {len(metrics)} metrics")
    return metrics


def _bounded(arrs: list[np.ndarray], metrics: list[str], confidence: float, n_resamples: int,
             seed: int) -> list[Interval]:
    """bounded_interval of each checked sample: those of the same n stacked, and each method given its
    rows at once. Every step is row by row (the bootstrap's matrix product made so: intervals), so a
    row's interval is the one its own call gives."""
    out: list[Interval | None] = [None] * len(arrs)
    by_n: dict[int, list[int]] = {}
    for i, arr in enumerate(arrs):
        if arr.size < 2:
            out[i] = degenerate_interval(arr, confidence)
        else:
            by_n.setdefault(arr.size, []).append(i)
    for n, members in by_n.items():
        x = np.stack([arrs[i] for i in members])
        means, flat = x.mean(axis=1), x.min(axis=1) == x.max(axis=1)
        methods = {m: method_for(m, n) for m in {metrics[i] for i in members}}
        rows: dict[str, list[int]] = {}
        for k, i in enumerate(members):
            method = methods[metrics[i]]
            # the betting interval stays honest on constant data; the others have none to give
            if flat[k] and method != "betting":
                out[i] = degenerate_interval(arrs[i], confidence)
            else:
                rows.setdefault(method, []).append(k)
        for method, ks in rows.items():
            fn = intervals.METHODS[method]
            if method in intervals.BOOTSTRAP:
                low, high = fn(x[ks], confidence, *SCALE, counts=_counts(n, n_resamples, seed), row_by_row=True)
            else:
                low, high = fn(x[ks], confidence, *SCALE)
            for k, lo, hi in zip(ks, low.tolist(), high.tolist()):
                out[members[k]] = Interval(float(means[k]), lo, hi, n, METHOD_NAMES[method], confidence)
    return out


def mean_interval(
    x,
    confidence: float = 0.95,
    *,
    metric: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """Mean of a metric over trials. A rubric score (``metric`` in BOUNDED) goes through
    bounded_interval, the method chosen for it. Any other metric (unbounded stats such as net
    worth), or values off 0..100: Student t below 30 trials, BCa bootstrap from 30.

    One trial gives ``low = high = None``; constant data a zero-width interval.
    If BCa itself degenerates (NaN bounds, which scipy reports with a
    DegenerateDataWarning) the t interval is returned and the method says so.
    """
    arr = finite_sample(x)
    # a score off the 0..100 scale (a game with its own scoring) takes the general path
    if metric in BOUNDED and (arr.size == 0 or (arr.min() >= SCALE[0] and arr.max() <= SCALE[1])):
        return bounded_interval(x, metric, confidence, n_resamples=n_resamples, seed=seed)
    check_confidence(confidence)
    arr = finite_sample(x)
    if arr.size < BCA_MIN_N or degenerate_interval(arr, confidence) is not None:
        return t_interval(arr, confidence)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", scipy.stats.DegenerateDataWarning)
        res = scipy.stats.bootstrap(
            (arr,),
            np.mean,
            confidence_level=confidence,
            n_resamples=n_resamples,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
    degenerate_bca = False
    for w in caught:
        if issubclass(w.category, scipy.stats.DegenerateDataWarning):
            degenerate_bca = True
        else:  # not ours to swallow
            warnings.warn(w.message, w.category, stacklevel=2)
    low, high = res.confidence_interval
    if degenerate_bca or not (np.isfinite(low) and np.isfinite(high)):
        return t_interval(arr, confidence, method="t (BCa degenerate)")
    return Interval(float(np.mean(arr)), float(low), float(high), int(arr.size), "BCa bootstrap", confidence)


def mean_intervals(samples, confidence: float = 0.95, *, metric: str | Sequence[str | None] | None = None,
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> list[Interval]:
    """mean_interval of each sample, each the same Interval to the last bit as its own call gives: the
    rubric scores on the scale go through bounded_intervals' path together. metric: one for every
    sample (None: none of them is a rubric score), or one per sample."""
    arrs = [np.asarray(x, dtype=float) for x in samples]
    metrics = _per_sample(metric, len(arrs))
    for arr in arrs:
        if arr.ndim != 1:
            finite_sample(arr)  # raises, saying why
    # the samples of the same n checked at once: a summary has a hundred or more
    on_scale = np.zeros(len(arrs), dtype=bool)
    by_n: dict[int, list[int]] = {}
    for i, arr in enumerate(arrs):
        by_n.setdefault(arr.size, []).append(i)
    for n, members in by_n.items():
        x = np.stack([arrs[i] for i in members])
        finite = np.isfinite(x).all(axis=1)
        if not finite.all():
            finite_sample(arrs[members[int(np.argmin(finite))]])  # raises, saying why
        if n == 0:
            on_scale[members] = True
        else:
            on_scale[members] = (x.min(axis=1) >= SCALE[0]) & (x.max(axis=1) <= SCALE[1])
    together = [i for i, m in enumerate(metrics) if m in BOUNDED and on_scale[i]]
    if together:
        check_confidence(confidence)
    found = _bounded([arrs[i] for i in together], [metrics[i] for i in together], confidence, n_resamples, seed)
    out = dict(zip(together, found))
    return [out[i] if i in out else mean_interval(arr, confidence, metric=m, n_resamples=n_resamples, seed=seed)
            for i, (arr, m) in enumerate(zip(arrs, metrics))]


def wilson(k: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson interval for a rate (won the match, survived): k successes in n trials.

    Wilson, not the normal approximation: it stays inside [0, 1] and keeps its
    coverage at 0/n and n/n, which are common for small series.
    """
    check_confidence(confidence)
    if int(k) != k or int(n) != n:
        raise ValueError(f"k and n must be integers, got k={k}, n={n}")
    k, n = int(k), int(n)
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    return _wilson(k, n, float(confidence))


@functools.lru_cache(maxsize=4096)
def _wilson(k: int, n: int, confidence: float) -> Interval:
    """A summary asks for the same few (k, n) over and over (every seat's win and survival rates, every
    time its series grows), and scipy takes a millisecond for each."""
    if n == 0:
        return Interval(None, None, None, 0, "wilson", confidence)
    ci = scipy.stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(k / n, float(ci.low), float(ci.high), n, "wilson", confidence)
