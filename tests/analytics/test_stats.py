"""Every interval is checked against a direct scipy call on fixed data."""

import warnings

import numpy as np
import pytest
from scipy import stats as st

from analytics.iqm import aggregate_iqm, iqm
from analytics.paired import paired_comparison, skill_uplift
from analytics.precision import precision_half_width
from analytics.stats import mean_interval, wilson

SMALL = np.array([2.1, 3.4, 1.9, 5.0, 4.2, 3.3, 2.8, 7.5, 3.0, 2.2])
# Skewed, fixed: 40 draws from a lognormal with a fixed seed.
LARGE = np.random.default_rng(7).lognormal(mean=1.0, sigma=0.8, size=40)


def test_mean_interval_below_30_is_the_scipy_t_interval():
    got = mean_interval(SMALL)
    low, high = st.t.interval(0.95, df=SMALL.size - 1, loc=SMALL.mean(), scale=st.sem(SMALL))
    assert got.method == "t"
    assert got.n == 10
    assert got.estimate == pytest.approx(SMALL.mean())
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-12)


def test_mean_interval_honours_confidence():
    got = mean_interval(SMALL, confidence=0.8)
    low, high = st.t.interval(0.8, df=SMALL.size - 1, loc=SMALL.mean(), scale=st.sem(SMALL))
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-12)


def test_mean_interval_from_30_is_the_scipy_bca_bootstrap_with_the_same_seed():
    got = mean_interval(LARGE, n_resamples=2000, seed=3)
    ref = st.bootstrap((LARGE,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(3))
    assert got.method == "BCa bootstrap"
    assert (got.low, got.high) == pytest.approx(tuple(ref.confidence_interval), rel=1e-12)
    # Skewed data: BCa is asymmetric, unlike t.
    assert got.high - got.estimate > got.estimate - got.low


def test_mean_interval_switches_method_at_30():
    assert mean_interval(LARGE[:29]).method == "t"
    assert mean_interval(LARGE[:30]).method == "BCa bootstrap"


def test_mean_interval_is_reproducible():
    assert mean_interval(LARGE) == mean_interval(LARGE)


def test_mean_interval_single_observation_has_no_bounds():
    got = mean_interval([4.5])
    assert (got.estimate, got.low, got.high, got.n) == (4.5, None, None, 1)


def test_mean_interval_empty():
    got = mean_interval([])
    assert (got.estimate, got.low, got.high, got.n) == (None, None, None, 0)


@pytest.mark.parametrize("n", [2, 5, 30, 60])
def test_mean_interval_constant_data_is_zero_width_without_warnings(n):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = mean_interval(np.full(n, 3.25))
    assert (got.estimate, got.low, got.high) == (3.25, 3.25, 3.25)
    assert got.method == "constant"


def test_mean_interval_falls_back_to_t_when_bca_degenerates(monkeypatch):
    # What scipy does when BCa cannot be computed: warn and return NaN bounds.
    class NanResult:
        confidence_interval = (np.nan, np.nan)

    def degenerate_bootstrap(*args, **kwargs):
        warnings.warn(st.DegenerateDataWarning("forced"))
        return NanResult()

    monkeypatch.setattr(st, "bootstrap", degenerate_bootstrap)  # analytics.stats calls scipy.stats.bootstrap
    got = mean_interval(LARGE)
    low, high = st.t.interval(0.95, df=LARGE.size - 1, loc=LARGE.mean(), scale=st.sem(LARGE))
    assert got.method == "t (BCa degenerate)"
    assert (got.low, got.high) == pytest.approx((low, high))


def test_mean_interval_refuses_nan():
    with pytest.raises(ValueError, match="NaN"):
        mean_interval([1.0, np.nan, 2.0])


@pytest.mark.parametrize(
    "n, ratio",
    # The table in the shared notes (h / s_ref).
    [(3, 2.48), (5, 1.24), (10, 0.715), (20, 0.468), (30, 0.373), (50, 0.284)],
)
def test_precision_half_width_matches_the_notes_table(n, ratio):
    got = precision_half_width(n, reference_sd=2.0)
    assert got.relative == pytest.approx(ratio, abs=0.005)
    assert got.half_width == pytest.approx(st.t.ppf(0.975, n - 1) * 2.0 / np.sqrt(n), rel=1e-12)
    assert got.single_run == pytest.approx(1.96 * 2.0, rel=1e-3)


def test_precision_half_width_single_run_has_no_t_figure():
    got = precision_half_width(1, reference_sd=3.0)
    assert got.half_width is None
    assert got.single_run == pytest.approx(1.96 * 3.0, rel=1e-3)


@pytest.mark.parametrize("k, n", [(7, 10), (0, 12), (12, 12), (1, 1), (33, 120)])
def test_wilson_is_the_scipy_binomtest_interval(k, n):
    got = wilson(k, n)
    ref = st.binomtest(k, n).proportion_ci(method="wilson")
    assert got.estimate == pytest.approx(k / n)
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_wilson_is_scipys_to_the_last_bit():
    """Every k of every n a series takes (1 to 60 trials) and a sample beyond, at three confidences:
    the bounds are scipy's binomtest ones exactly, so summaries are unchanged to the last digit."""
    rng = np.random.default_rng(5)
    cases = [(k, n) for n in range(1, 61) for k in range(n + 1)]
    cases += [(int(rng.integers(0, n + 1)), int(n)) for n in rng.integers(61, 5000, 300)]
    for confidence in (0.95, 0.9, 0.99):
        for k, n in cases:
            got = wilson(k, n, confidence)
            ref = st.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
            assert (got.low, got.high) == (float(ref.low), float(ref.high)), (k, n, confidence)


def test_wilson_matches_the_closed_form():
    k, n, z = 7, 10, st.norm.ppf(0.975)
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
    got = wilson(k, n)
    assert (got.low, got.high) == pytest.approx((centre - half, centre + half), rel=1e-9)


def test_wilson_zero_trials_and_bad_input():
    got = wilson(0, 0)
    assert (got.estimate, got.low, got.high, got.n) == (None, None, None, 0)
    with pytest.raises(ValueError):
        wilson(5, 3)
    with pytest.raises(ValueError):
        wilson(-1, 3)


A = np.array([3.0, 2.0, 5.0, 1.0, 4.5, 6.0, 2.5, 3.5])
B = np.array([1.0, 2.0, 4.0, 2.0, 4.0, 5.0, 2.5, 1.0])


def test_paired_difference_is_the_t_interval_on_differences():
    got = paired_comparison(A, B)
    d = A - B
    low, high = st.t.interval(0.95, df=d.size - 1, loc=d.mean(), scale=st.sem(d))
    assert got.difference.estimate == pytest.approx(A.mean() - B.mean())
    assert (got.difference.low, got.difference.high) == pytest.approx((low, high), rel=1e-12)
    assert (got.mean_a, got.mean_b, got.n) == (A.mean(), B.mean(), 8)


def test_probability_of_improvement_by_hand_and_against_scipy_bootstrap():
    got = paired_comparison(A, B, n_resamples=2000, seed=5)
    # Wins on seeds 0, 2, 4, 5, 7; ties on 1 and 6; loss on 3: (5 + 2 * 0.5) / 8.
    assert got.prob_improvement.estimate == pytest.approx(0.75)
    wins = np.array([1, 0.5, 1, 0, 1, 1, 0.5, 1])
    ref = st.bootstrap((wins,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(5))
    assert (got.prob_improvement.low, got.prob_improvement.high) == pytest.approx(
        tuple(ref.confidence_interval), rel=1e-12
    )
    assert 0.0 <= got.prob_improvement.low <= 0.75 <= got.prob_improvement.high <= 1.0


def test_pairing_removes_shared_seed_variance():
    # b varies a lot between seeds, a is always exactly 1 better: the paired
    # difference is certain although the unpaired means overlap widely.
    b = np.array([1.0, 10.0, 3.0, 40.0, 7.0])
    got = paired_comparison(b + 1.0, b)
    assert (got.difference.low, got.difference.high) == (1.0, 1.0)
    assert (got.prob_improvement.estimate, got.prob_improvement.low, got.prob_improvement.high) == (1.0, 1.0, 1.0)


def test_paired_comparison_refuses_misaligned_input():
    with pytest.raises(ValueError, match="aligned"):
        paired_comparison([1.0, 2.0], [1.0])


def test_paired_comparison_single_seed_has_no_bounds():
    got = paired_comparison([2.0], [1.0])
    assert got.difference.estimate == 1.0
    assert (got.difference.low, got.difference.high) == (None, None)
    assert got.prob_improvement.estimate == 1.0
    assert got.prob_improvement.low is None


def test_skill_uplift_is_with_minus_without():
    with_skill = np.array([12.0, 15.0, 11.0, 14.0, 13.0, 16.0])
    without = np.array([10.0, 14.0, 11.5, 11.0, 12.0, 13.0])
    got = skill_uplift(with_skill, without)
    assert got == paired_comparison(with_skill, without)
    assert got.difference.estimate == pytest.approx(9.5 / 6)  # differences 2, 1, -0.5, 3, 1, 3
    assert got.prob_improvement.estimate == pytest.approx(5 / 6)


def test_iqm_by_hand():
    assert iqm(np.arange(1.0, 9.0)) == pytest.approx(4.5)  # mean of 3, 4, 5, 6
    assert iqm([0, 1, 2, 3, 4, 5, 6, 1000]) == pytest.approx(3.5)  # the outlier is trimmed
    # Asymmetric, so trimming a fifth instead of a quarter would give 125.
    assert iqm([0, 10, 20, 30, 40, 50, 600, 1000]) == pytest.approx(35.0)
    with pytest.raises(ValueError):
        iqm([])


def test_aggregate_iqm_with_one_task_is_the_scipy_percentile_bootstrap():
    got = aggregate_iqm({"only": LARGE}, n_resamples=2000, seed=11)

    def trimmed(x, axis):
        return st.trim_mean(x, 0.25, axis=axis)

    ref = st.bootstrap((LARGE,), trimmed, n_resamples=2000, method="percentile", rng=np.random.default_rng(11))
    assert got.estimate == pytest.approx(st.trim_mean(LARGE, 0.25))
    assert (got.low, got.high) == pytest.approx(tuple(ref.confidence_interval), rel=1e-12)


def test_aggregate_iqm_resamples_within_each_task():
    # Each task is constant, so a stratified resample always holds four 0s and
    # four 100s (IQM 50); resampling across tasks would move the IQM.
    got = aggregate_iqm({"a": [0.0] * 4, "b": [100.0] * 4}, n_resamples=500)
    assert (got.estimate, got.low, got.high, got.n) == (50.0, 50.0, 50.0, 8)


def test_aggregate_iqm_pools_tasks_and_ignores_dict_order():
    tasks = {"forest": LARGE[:20], "desert": LARGE[20:] * 2.0, "coast": SMALL}
    got = aggregate_iqm(tasks)
    pooled = np.concatenate([LARGE[:20], LARGE[20:] * 2.0, SMALL])
    assert got.estimate == pytest.approx(st.trim_mean(pooled, 0.25))
    assert got.low < got.estimate < got.high
    assert aggregate_iqm(dict(reversed(tasks.items()))) == got


def test_aggregate_iqm_refuses_empty_input():
    with pytest.raises(ValueError):
        aggregate_iqm({})
    with pytest.raises(ValueError, match="no runs"):
        aggregate_iqm({"a": [1.0, 2.0], "b": []})


def test_results_serialise_without_nan():
    import json

    json.dumps(mean_interval([1.0]).to_dict(), allow_nan=False)
    json.dumps(paired_comparison([2.0], [1.0]).to_dict(), allow_nan=False)
