"""Interval methods against reference values, on edge cases, and the bounded choice."""
import json

import numpy as np
import pytest
from scipy import stats as st

from analytics import choice, intervals, paired, precision, stats

X = np.array([12.0, 40.5, 33.0, 0.0, 71.25, 18.0, 55.0, 9.5, 26.0, 44.0, 0.0, 62.0])
ZEROS_HEAVY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0, 85.0])


@pytest.mark.parametrize("scipy_method,fn", [("percentile", intervals.percentile), ("BCa", intervals.bca)])
def test_bootstrap_on_one_row_equals_scipy_with_the_same_generator(scipy_method, fn):
    want = st.bootstrap((X,), np.mean, method=scipy_method, n_resamples=2000,
                        rng=np.random.default_rng(3)).confidence_interval
    low, high = fn(X, n_resamples=2000, rng=np.random.default_rng(3))
    assert (low[0], high[0]) == pytest.approx(tuple(want), rel=1e-12)


def test_bootstrap_rows_are_independent_series():
    rows = np.stack([X, X[::-1] + 1.0, np.roll(X, 3)])
    low, high = intervals.bca(rows, n_resamples=500, rng=np.random.default_rng(1))
    assert low.shape == high.shape == (3,)
    assert np.all(low < rows.mean(axis=1)) and np.all(rows.mean(axis=1) < high)


def test_t_is_scipys_t_interval():
    low, high = intervals.t(X)
    want = st.t.interval(0.95, df=X.size - 1, loc=X.mean(), scale=st.sem(X))
    assert (low[0], high[0]) == pytest.approx(want, rel=1e-12)


def test_clipped_t_and_arcsine_stay_on_the_scale_where_t_leaves_it():
    low, _ = intervals.t(ZEROS_HEAVY)
    assert low[0] < 0
    for fn in (intervals.t_clipped, intervals.arcsine_t):
        low, high = fn(ZEROS_HEAVY)
        assert 0.0 <= low[0] < ZEROS_HEAVY.mean() < high[0] <= 100.0


def test_arcsine_t_back_transforms_the_t_interval_of_arcsin_sqrt():
    y = np.arcsin(np.sqrt(X / 100))
    a, b = st.t.interval(0.95, df=y.size - 1, loc=y.mean(), scale=st.sem(y))
    low, high = intervals.arcsine_t(X)
    assert (low[0], high[0]) == pytest.approx((100 * np.sin(a) ** 2, 100 * np.sin(b) ** 2), rel=1e-12)


def test_betting_interval_holds_the_mean_and_shrinks_with_n():
    rng = np.random.default_rng(0)
    small = rng.uniform(20, 60, 10)
    large = rng.uniform(20, 60, 200)
    (l1,), (h1,) = intervals.betting(small)
    (l2,), (h2,) = intervals.betting(large)
    assert l1 <= small.mean() <= h1 and l2 <= large.mean() <= h2
    assert h2 - l2 < h1 - l1 and 0 <= l1 and h1 <= 100


def test_betting_covers_a_skewed_bounded_mean_even_at_five_trials():
    rng = np.random.default_rng(7)
    pop = np.where(rng.random(4000) < 0.4, 0.0, rng.uniform(30, 100, 4000))
    x = pop[rng.integers(0, pop.size, (400, 5))]
    low, high = intervals.betting(x)
    assert np.mean((low <= pop.mean()) & (pop.mean() <= high)) >= 0.95


@pytest.mark.parametrize("fn", list(intervals.METHODS.values()))
def test_all_equal_rows_do_not_crash(fn):
    low, high = fn(np.zeros((2, 5)))
    assert np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and np.all(low <= 0.0) and np.all(high >= 0.0)


def test_the_choice_covers_every_bounded_metric_at_every_n():
    for metric in choice.BOUNDED:
        for n in (2, 3, 4, 5, 7, 10, 29, 30, 50, 500):
            assert choice.method_for(metric, n) in intervals.METHODS
            assert choice.method_for(metric, n) != "t"  # plain t can leave the scale
    with pytest.raises(ValueError, match="no interval choice"):
        choice.method_for("net_worth", 5)


@pytest.mark.parametrize("metric", choice.BOUNDED)
@pytest.mark.parametrize("sample", [ZEROS_HEAVY, X, np.array([100.0, 100.0, 100.0, 96.0, 100.0])])
def test_bounded_interval_stays_within_0_100(metric, sample):
    got = stats.mean_interval(sample, metric=metric)
    assert got.method == choice.METHOD_NAMES[choice.method_for(metric, sample.size)]
    assert 0.0 <= got.low <= got.estimate <= got.high <= 100.0


@pytest.mark.parametrize("n", [0, 1])
def test_bounded_interval_on_no_or_one_trial_has_no_bounds(n):
    got = stats.mean_interval(np.full(n, 40.0), metric="social")
    assert got.low is None and got.high is None and got.n == n
    json.dumps(got.to_dict(), allow_nan=False)


def test_bounded_interval_on_two_trials_is_an_answer():
    got = stats.mean_interval([10.0, 30.0], metric="fitness_index")
    assert 0.0 <= got.low <= 20.0 <= got.high <= 100.0


def test_bounded_interval_refuses_scores_off_the_scale():
    with pytest.raises(ValueError, match="0..100"):
        stats.bounded_interval([10.0, 130.0], "economy")
    # the summary's path sends off-scale values (another game's scoring) to the general method
    assert stats.mean_interval([10.0, 130.0, 20.0], metric="economy").method == "t"


def test_paired_difference_of_scores_stays_within_minus_100_100():
    a = np.array([100.0, 100.0, 98.0, 100.0])
    b = np.array([0.0, 2.0, 0.0, 0.0])
    got = paired.paired_comparison(a, b, bounded=True).difference
    assert -100.0 <= got.low <= got.estimate <= got.high <= 100.0
    assert got.method == choice.METHOD_NAMES[choice.DIFFERENCE_METHOD]


def test_precision_for_fitness_is_the_chosen_methods_width_on_the_reference_series():
    n = 10
    x = precision.reference_series(n, 10.0)
    low, high = intervals.METHODS[choice.method_for("fitness_index", n)](x)
    got = precision.precision_half_width(n, 10.0, metric="fitness_index")
    assert got.method == choice.method_for("fitness_index", n)
    assert got.half_width == pytest.approx(float(np.mean(high - low)) / 2, rel=1e-12)


def test_bootstrap_t_follows_its_definition_on_one_row():
    rng = np.random.default_rng(4)
    idx = rng.integers(0, X.size, (3000, X.size))
    boot = X[idx]
    tstar = (boot.mean(axis=1) - X.mean()) / (boot.std(axis=1, ddof=1) / np.sqrt(X.size))
    se = st.sem(X)
    want = (X.mean() - np.quantile(tstar, 0.975) * se, X.mean() - np.quantile(tstar, 0.025) * se)
    low, high = intervals.bootstrap_t(X, n_resamples=3000, rng=np.random.default_rng(4))
    assert (low[0], high[0]) == pytest.approx(want, rel=1e-9)


def test_bootstrap_t_with_spreadless_resamples_widens_to_the_scale():
    low, high = intervals.bootstrap_t(np.array([0.0, 0.0, 0.0, 0.0, 50.0]))
    assert (low[0], high[0]) == (0.0, 100.0)
