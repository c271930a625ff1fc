"""Many samples' intervals in one call (stats.mean_intervals, as the series summary computes every
seat's) are each the interval a call of its own gives, to the last bit: on scores of played matches,
for every bounded method and the sizes the choice changes at, with constant seats and seats of
different n in the same call."""
import numpy as np
import pytest

from analytics import choice, intervals, stats
from analytics.data import DIMENSIONS
from orchestrator.sample import local_seats, play_series
from tests.analytics.conftest import ANCHORS, direct_seats

METRICS = ("fitness_index", *DIMENSIONS)
SIZES = (3, 5, 10, 20, 30, 50)


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> dict:
    """(metric, seat) -> that seat's scores over 50 played matches, in match order."""
    root = tmp_path_factory.mktemp("fifty")
    roster = local_seats(["honest-trader", "aggressive-raider", "greedy-harvester", "random"])
    play_series(root, "bat_n", roster, range(50), season_ticks=40, anchors=ANCHORS)
    rows = direct_seats(root).sort_values(["seed", "seat"])
    return {(m, seat): part[m].to_numpy(float) for seat, part in rows.groupby("seat") for m in METRICS}


def one_by_one(x: np.ndarray, metric: str) -> stats.Interval:
    """The interval of one sample as a call of its own computes it: the method on a one-row matrix,
    with a fresh generator."""
    if x.size < 2:
        return stats.mean_interval(x, metric=metric)
    method = choice.method_for(metric, x.size)
    if method != "betting" and np.ptp(x) == 0:
        return stats.Interval(float(x[0]), float(x[0]), float(x[0]), x.size, "constant")
    extra = {"n_resamples": 2000, "rng": np.random.default_rng(0)} if method in intervals.BOOTSTRAP else {}
    low, high = intervals.METHODS[method](x[None, :], 0.95, 0.0, 100.0, **extra)
    return stats.Interval(float(x.mean()), float(low[0]), float(high[0]), x.size, choice.METHOD_NAMES[method])


def test_each_seats_interval_in_one_call_is_its_own_to_the_last_bit(scores):
    samples, metrics = [], []
    for n in SIZES:
        for (metric, seat), x in scores.items():
            samples.append(x[:n])
            metrics.append(metric)
        for metric in METRICS:
            samples += [np.full(n, 35.5), np.full(n, 0.0), scores[metric, 0][:n - 1]]  # no spread; one trial short
            metrics += [metric] * 3
    samples += [np.array([]), np.array([42.0])]
    metrics += ["fitness_index", "economy"]
    together = stats.mean_intervals(samples, metric=metrics)
    assert len(together) == len(samples)
    for x, metric, got in zip(samples, metrics, together):
        assert got == one_by_one(x, metric) == stats.mean_interval(x, metric=metric), (metric, x.size)
    used = {got.method for got in together}
    assert {choice.METHOD_NAMES[m] for m in ("betting", "bootstrap_t", "t_clipped", "percentile", "bca",
                                            "arcsine_t")} | {"constant"} <= used


def test_samples_off_the_scale_or_not_rubric_scores_take_the_general_path(scores):
    x = scores["fitness_index", 1][:30]
    off = np.append(x[:9], 130.0)
    samples = [x, off, x, x[:12]]
    got = stats.mean_intervals(samples, metric=["fitness_index", "economy", None, None])
    assert got == [stats.mean_interval(x, metric="fitness_index"), stats.mean_interval(off, metric="economy"),
                   stats.mean_interval(x), stats.mean_interval(x[:12])]
    assert [g.method for g in got[1:]] == ["t", "BCa bootstrap", "t"]


def test_bounded_intervals_refuse_what_bounded_interval_refuses():
    with pytest.raises(ValueError, match="must lie in 0..100"):
        stats.bounded_intervals([[10.0, 20.0], [10.0, 130.0]], "economy")
    with pytest.raises(ValueError, match="NaN"):
        stats.mean_intervals([[10.0, 20.0], [10.0, np.nan]], metric="economy")
    with pytest.raises(ValueError, match="2 samples but 1 metrics"):
        stats.mean_intervals([[10.0, 20.0], [10.0, 30.0]], metric=["economy"])


def test_rows_resampled_row_by_row_equal_one_row_calls():
    x = np.round(np.random.default_rng(5).beta(2, 3, (40, 20)) * 100, 2)
    counts = intervals.resample_counts(20, 2000, np.random.default_rng(0))
    assert np.array_equal(counts.sum(axis=1), np.full(2000, 20.0))
    for fn in (intervals.percentile, intervals.bca, intervals.bootstrap_t):
        low, high = fn(x, counts=counts, row_by_row=True)
        for k, row in enumerate(x):
            one = fn(row, rng=np.random.default_rng(0))
            assert (low[k], high[k]) == (one[0][0], one[1][0])
