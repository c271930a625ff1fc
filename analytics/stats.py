"""Intervals and comparisons for a series of trials.

Pure functions over numpy arrays: no I/O, no service imports, so notebooks, the
series summary and the API all go through the same path.

Degenerate inputs never raise: an interval that cannot be computed (one
observation, no observations, zero trials for a rate) has ``low = high = None``
rather than NaN, because these results end up in JSON, where NaN is not valid.
Constant data gives the zero-width interval ``low = high = estimate``.

Bootstrap intervals use a fixed seed by default so that the same data always
gives the same interval (a report re-run must not move).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import asdict, dataclass, fields
from typing import Mapping, Sequence

import numpy as np
# scipy loads its submodules on first use: importing the service stays a second faster
import scipy

from analytics import intervals
from analytics.ranking import bradley_terry, tie_groups  # noqa: F401  (re-exported)

# Below this many trials BCa undercovers on skewed data (82% at N=5 against 88%
# for t, see shared notes); from here on the bootstrap's freedom from the
# normality assumption is worth more.
BCA_MIN_N = 30

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0

# Scores on the rubric's 0..100 scale (docs/RUBRIC.md). Their intervals never leave it.
SCALE = (0.0, 100.0)
BOUNDED = ("fitness_index", "crafter_score", "survival", "economy", "social", "competitiveness", "exploration")

# The interval method per metric and number of trials: the narrowest bounded method that held
# coverage >= 93% on all four populations of benchmarks/coverage.py (2 worlds x 2 seats, 1,500
# series per cell). A series of n trials uses the entry of the largest listed n <= n (the 3-trial
# entry below 3). docs/RUBRIC.md shows the measured table; rerun the benchmark after a rubric
# or engine change and copy its measured_choice here.
CHOICE: dict[str, dict[int, str]] = {
    "fitness_index": {3: "betting", 5: "bootstrap_t", 10: "t_clipped", 20: "t_clipped", 30: "percentile", 50: "percentile"},
    "crafter_score": {3: "betting", 5: "betting", 10: "betting", 20: "bootstrap_t", 30: "bootstrap_t", 50: "bootstrap_t"},
    "survival": {3: "betting", 5: "betting", 10: "betting", 20: "betting", 30: "betting", 50: "betting"},
    "economy": {3: "betting", 5: "betting", 10: "betting", 20: "bootstrap_t", 30: "bootstrap_t", 50: "bca"},
    "social": {3: "betting", 5: "betting", 10: "betting", 20: "bootstrap_t", 30: "bootstrap_t", 50: "bca"},
    "competitiveness": {3: "betting", 5: "betting", 10: "betting", 20: "bootstrap_t", 30: "t_clipped", 50: "percentile"},
    "exploration": {3: "betting", 5: "arcsine_t", 10: "t_clipped", 20: "t_clipped", 30: "bca", 50: "percentile"},
}
# The estimate's precision figure (precision_half_width) for a bounded metric is the mean half-width
# the summary's own method gives at n trials on this reference population: scores Beta-distributed
# on the 0..100 scale with mean 50 and the reference spread (sd 10: Beta(12, 12) x 100), REFERENCE_SERIES
# series per n. Trial j of every series is drawn from its own seeded generator, so a series of n + 1
# trials extends the series of n and the figure moves with n alone, not with fresh noise.
REFERENCE_MEAN = 50.0
REFERENCE_SERIES = 1000
SINGLE_RUN = "single_run_no_interval"  # the precision method of one trial: a single run has no interval
# The paired difference of two 0..100 scores (-100..100): t cut to -100..100 held 94-96% coverage
# for fitness_index at every n in benchmarks/coverage.py (one seat, two configurations, shared seeds).
DIFFERENCE_METHOD = "t_clipped"

METHOD_NAMES = {"t": "t", "t_clipped": "t, cut to the scale", "arcsine_t": "arcsine-transformed t",
                "percentile": "percentile bootstrap", "bca": "BCa bootstrap",
                "bootstrap_t": "bootstrap-t, cut to the scale", "betting": "hedged-capital betting"}


def method_for(metric: str, n: int) -> str:
    """The interval method a bounded metric's mean uses at n trials (a key of intervals.METHODS)."""
    table = CHOICE.get(metric)
    if table is None:
        raise ValueError(f"no interval choice for {metric!r}; bounded metrics: {', '.join(BOUNDED)}")
    listed = [k for k in sorted(table) if k <= n]
    return table[listed[-1] if listed else min(table)]


def choice_text(metric: str) -> str:
    """CHOICE for one metric in words, e.g. "hedged-capital betting for 2-4 trials; ...; percentile
    bootstrap from 30": the notebook shows this rather than restating the table."""
    table = CHOICE[metric]
    starts = sorted(table)
    spans: list[list] = []  # [method, first n, last n or None]
    for i, k in enumerate(starts):
        first = 2 if i == 0 else k  # the first entry also serves the series shorter than it
        last = starts[i + 1] - 1 if i + 1 < len(starts) else None
        if spans and spans[-1][0] == table[k]:
            spans[-1][2] = last
        else:
            spans.append([table[k], first, last])
    return "; ".join(f"{METHOD_NAMES[m]} " + (f"from {a} trials" if b is None else f"for {a}-{b} trials")
                     for m, a, b in spans)


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


def _finite_1d(x, name: str = "x") -> np.ndarray:
    """Validate a sample: 1-D, float, finite. NaN is refused, not dropped, so a
    missing value upstream shows up as an error instead of a silently smaller n."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _degenerate(arr: np.ndarray, confidence: float) -> Interval | None:
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


def _t_interval(arr: np.ndarray, confidence: float, method: str = "t") -> Interval:
    degenerate = _degenerate(arr, confidence)
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
    _check_confidence(confidence)
    arrs = [_finite_1d(x) for x in samples]
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
            out[i] = _degenerate(arr, confidence)
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
                out[i] = _degenerate(arrs[i], confidence)
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


def difference_bounds(d, confidence: float = 0.95):
    """Bounds of the mean paired difference of two 0..100 scores, rows of ``d`` being series
    (shape (series, n) or (n,)): DIFFERENCE_METHOD on the -100..100 scale."""
    fn = intervals.METHODS[DIFFERENCE_METHOD]
    if DIFFERENCE_METHOD in intervals.BOOTSTRAP:
        return fn(d, confidence, -SCALE[1], SCALE[1], rng=np.random.default_rng(DEFAULT_SEED))
    return fn(d, confidence, -SCALE[1], SCALE[1])


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
    arr = _finite_1d(x)
    # a score off the 0..100 scale (a game with its own scoring) takes the general path
    if metric in BOUNDED and (arr.size == 0 or (arr.min() >= SCALE[0] and arr.max() <= SCALE[1])):
        return bounded_interval(x, metric, confidence, n_resamples=n_resamples, seed=seed)
    _check_confidence(confidence)
    arr = _finite_1d(x)
    if arr.size < BCA_MIN_N or _degenerate(arr, confidence) is not None:
        return _t_interval(arr, confidence)

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
        return _t_interval(arr, confidence, method="t (BCa degenerate)")
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
            _finite_1d(arr)  # raises, saying why
    # the samples of the same n checked at once: a summary has a hundred or more
    on_scale = np.zeros(len(arrs), dtype=bool)
    by_n: dict[int, list[int]] = {}
    for i, arr in enumerate(arrs):
        by_n.setdefault(arr.size, []).append(i)
    for n, members in by_n.items():
        x = np.stack([arrs[i] for i in members])
        finite = np.isfinite(x).all(axis=1)
        if not finite.all():
            _finite_1d(arrs[members[int(np.argmin(finite))]])  # raises, saying why
        if n == 0:
            on_scale[members] = True
        else:
            on_scale[members] = (x.min(axis=1) >= SCALE[0]) & (x.max(axis=1) <= SCALE[1])
    together = [i for i, m in enumerate(metrics) if m in BOUNDED and on_scale[i]]
    if together:
        _check_confidence(confidence)
    found = _bounded([arrs[i] for i in together], [metrics[i] for i in together], confidence, n_resamples, seed)
    out = dict(zip(together, found))
    return [out[i] if i in out else mean_interval(arr, confidence, metric=m, n_resamples=n_resamples, seed=seed)
            for i, (arr, m) in enumerate(zip(arrs, metrics))]


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
    _check_confidence(confidence)
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


def wilson(k: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson interval for a rate (won the match, survived): k successes in n trials.

    Wilson, not the normal approximation: it stays inside [0, 1] and keeps its
    coverage at 0/n and n/n, which are common for small series.
    """
    _check_confidence(confidence)
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


def _bootstrap_mean_percentile(values: np.ndarray, confidence: float, n_resamples: int, seed: int) -> Interval:
    """Percentile bootstrap of a mean. Used for bounded, discrete statistics
    (probability of improvement) where BCa's jackknife degenerates on ties."""
    degenerate = _degenerate(values, confidence)
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
    _check_confidence(confidence)
    a_arr = _finite_1d(a, "a")
    b_arr = _finite_1d(b, "b")
    if a_arr.size != b_arr.size:
        raise ValueError(f"a and b must be aligned by seed: lengths {a_arr.size} and {b_arr.size}")
    d = a_arr - b_arr
    difference = _degenerate(d, confidence)
    if difference is None and bounded:
        low, high = difference_bounds(d, confidence)
        difference = Interval(float(d.mean()), float(low[0]), float(high[0]), int(d.size),
                              METHOD_NAMES[DIFFERENCE_METHOD], confidence)
    elif difference is None:
        difference = _t_interval(d, confidence)
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


def iqm(x) -> float:
    """Interquartile mean: the mean of the middle 50% (scipy's trim_mean at 0.25),
    robust to a few runaway runs yet less noisy than the median."""
    arr = _finite_1d(x)
    if arr.size == 0:
        raise ValueError("iqm of an empty sample")
    return float(scipy.stats.trim_mean(arr, 0.25))


def aggregate_iqm(
    scores_by_task: Mapping[str, object],
    confidence: float = 0.95,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """IQM over all runs of several scenarios with a stratified bootstrap interval
    (rliable): runs are resampled within each scenario independently, so every
    resample keeps each scenario's number of runs. Scores must be on a common
    scale (e.g. normalised 0..100) for the pooled IQM to mean anything.

    Memory is n_resamples x total runs floats.
    """
    _check_confidence(confidence)
    if not scores_by_task:
        raise ValueError("scores_by_task is empty")
    # Sorted so the same data gives the same interval whatever the dict order.
    tasks = [(name, _finite_1d(scores_by_task[name], f"scores[{name!r}]")) for name in sorted(scores_by_task)]
    for name, arr in tasks:
        if arr.size == 0:
            raise ValueError(f"scenario {name!r} has no runs")
    pooled = np.concatenate([arr for _, arr in tasks])
    estimate = float(scipy.stats.trim_mean(pooled, 0.25))
    n = int(pooled.size)

    rng = np.random.default_rng(seed)
    # Draws are made the way scipy.stats.bootstrap makes them, so with one
    # scenario this is exactly scipy's percentile bootstrap of the IQM.
    resampled = np.concatenate(
        [arr[rng.integers(0, arr.size, (n_resamples, arr.size))] for _, arr in tasks], axis=1
    )
    boot = scipy.stats.trim_mean(resampled, 0.25, axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return Interval(estimate, float(low), float(high), n, "IQM, stratified percentile bootstrap", confidence)
