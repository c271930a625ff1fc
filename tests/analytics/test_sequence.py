"""The confidence sequence (analytics.sequence) against the authors' own code on fixed data, and the
properties the paper proves: it holds the mean at every n at once, only narrows, stays on the scale."""
import itertools
import math

import numpy as np
import pytest
import scipy

from analytics import sequence

# confseq 0.0.11 (Waudby-Smith and Ramdas' code, betting.hedged_cs(x / 100, alpha=0.05, breaks=1000,
# running_intersection=True)) on these series, x 100: bounds after n scores
CONFSEQ = {
    (0, 10, 30, 200): {1: (0.0, 100.0), 2: (0.0, 100.0), 5: (0.0, 74.8), 10: (10.3, 59.1), 30: (18.3, 39.7),
                       200: (24.0, 28.5)},
    (3, 30, 3, 80): {1: (0.0, 100.0), 2: (0.0, 100.0), 5: (29.0, 100.0), 10: (48.1, 100.0), 30: (71.7, 95.6),
                     80: (82.5, 92.8)},
}


@pytest.mark.parametrize("key", CONFSEQ)
def test_bounds_equal_the_authors_code(key):
    seed, a, b, n = key
    x = np.random.default_rng(seed).beta(a, b, n) * 100
    low, high = sequence.bounds(x)
    for k, want in CONFSEQ[key].items():
        assert (low[k - 1], high[k - 1]) == pytest.approx(want, abs=1e-9)


def test_it_only_narrows_and_stays_on_the_scale():
    x = np.random.default_rng(5).beta(2, 5, 120) * 100
    low, high = sequence.bounds(x)
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) <= 0)
    assert np.all(low >= 0) and np.all(high <= 100) and np.all(low <= high)


def test_other_scales_are_the_same_sequence_rescaled():
    x = np.random.default_rng(6).beta(3, 3, 40)
    low, high = sequence.bounds(x, 0.0, 1.0)
    low100, high100 = sequence.bounds(x * 100)
    assert low * 100 == pytest.approx(low100) and high * 100 == pytest.approx(high100)


def test_equal_scores_never_give_a_zero_width():
    s = sequence.sequence([50.0] * 30)
    assert s.low < 50 < s.high and s.half_width > 1


def test_it_covers_at_every_n_at_once():
    # 400 series of 150 scores from a skewed population: the share ever excluding the mean stays
    # under 5% (the paper's guarantee, usually far under it)
    rng = np.random.default_rng(11)
    x = rng.beta(0.8, 3.0, (400, 150)) * 100
    truth = 100 * 0.8 / 3.8
    low, high = sequence.bounds(x)
    missed = ((low > truth) | (high < truth)).any(axis=1)
    assert missed.mean() <= 0.05


def test_a_fixed_n_interval_stopped_when_narrow_misses_more_than_the_sequence():
    # optional stopping: stop each series the first time its t interval is narrower than 4 points;
    # the t interval then misses far more often than its nominal 5%, the sequence does not
    rng = np.random.default_rng(12)
    x = rng.beta(1.0, 1.5, (600, 150)) * 100
    truth = 100 * 1.0 / 2.5
    n = np.arange(1, 151)
    mean = np.cumsum(x, axis=1) / n
    sd = np.sqrt(np.maximum(np.cumsum(x ** 2, axis=1) / n - mean ** 2, 0) * n / np.maximum(n - 1, 1))
    half = 1.96 * sd / np.sqrt(n)
    missed_t = ((np.abs(mean - truth) > half) & (n >= 5)).any(axis=1).mean()
    low, high = sequence.bounds(x)
    missed_cs = ((low > truth) | (high < truth)).any(axis=1).mean()
    assert missed_t > 0.2 and missed_cs <= 0.05


def test_sequence_view():
    s = sequence.sequence([40.0, 60.0, 55.0, 45.0, 50.0] * 4)
    d = s.to_dict()
    assert set(d) == {"low", "high", "half_width", "method"} and d["method"] == sequence.METHOD
    assert d["half_width"] == pytest.approx((d["high"] - d["low"]) / 2, abs=0.01)
    assert sequence.sequence([]).to_dict()["low"] is None


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        sequence.bounds([10.0, 120.0])
    with pytest.raises(ValueError):
        sequence.bounds([10.0, float("nan")])


def test_expected_trials_grows_as_the_target_narrows_and_stays_in_range():
    got = [sequence.expected_trials(h, 50, 10.0) for h in (40, 20, 10, 5)]
    assert got == sorted(got) and got[0] < got[-1]
    assert all(2 <= g <= 50 for g in got)
    assert sequence.expected_trials(0.01, 50, 10.0) == 50      # never narrow enough: the ceiling
    assert sequence.expected_trials(60, 50, 10.0) == 2         # at once: still a series of 2
    # a metric on another scale: the target is read in its units
    assert sequence.expected_trials(0.1, 50, 10.0, 0.0, 1.0) == sequence.expected_trials(10, 50, 10.0)


# The authors' code (confseq at commit 70b1ef3, run from its source: betting.betting_cs with both
# gamblers' bets from betting_strategies.lambda_predmix_eb(x, alpha=0.025, fixed_n=tuned_n(target)),
# breaks=1000, trunc_scale=0.9, running_intersection=True) on these series, x 100: (seed, a, b, n,
# target) -> bounds after k scores
CONFSEQ_TUNED = {
    (0, 10, 30, 120, 6.0): {1: (0.0, 100.0), 5: (0.0, 78.0), 10: (4.2, 49.0), 30: (19.7, 33.6), 120: (23.6, 28.0)},
    (3, 30, 3, 80, 3.0): {5: (0.0, 100.0), 10: (52.0, 100.0), 30: (78.5, 97.8), 80: (85.7, 92.3)},
    (7, 12, 12, 60, 10.0): {5: (15.8, 82.8), 10: (29.7, 64.5), 30: (41.2, 55.6), 60: (44.8, 52.8)},
}


@pytest.mark.parametrize("key", CONFSEQ_TUNED)
def test_tuned_bounds_equal_the_authors_code(key):
    seed, a, b, n, target = key
    x = np.random.default_rng(seed).beta(a, b, n) * 100
    low, high = sequence.bounds(x, half_width=target)
    for k, want in CONFSEQ_TUNED[key].items():
        assert (low[k - 1], high[k - 1]) == pytest.approx(want, abs=1e-9)


def _beta(mean, sd, size, seed):
    """Scores on 0..100 from a Beta population of this mean and sd (fitness-like: sd about 10)."""
    p, v = mean / 100, (sd / 100) ** 2
    k = p * (1 - p) / v - 1
    return np.random.default_rng(seed).beta(p * k, (1 - p) * k, size) * 100


@pytest.mark.parametrize("mean, sd, target", [(60, 9, 6.0), (30, 12, 3.0), (50, 25, 10.0)])
def test_tuned_sequence_covers_at_every_n_at_once(mean, sd, target):
    x = _beta(mean, sd, (300, 120), 21)
    low, high = sequence.bounds(x, half_width=target)
    missed = ((low > mean) | (high < mean)).any(axis=1)
    assert missed.mean() <= 0.05
    assert np.all(np.diff(low, axis=1) >= 0) and np.all(np.diff(high, axis=1) <= 0)
    assert np.all(low >= 0) and np.all(high <= 100) and np.all(low <= high)


def test_tuned_to_thirty_trials_it_is_far_closer_to_the_t_interval():
    # a target whose tuned trial count is 30; the t interval from scipy at n = 30 on the same series
    x = _beta(50, 10, (300, 30), 22)
    target = 100 * sequence.REFERENCE_SPREAD * np.sqrt(2 * np.log(2 / 0.05) / 30)
    assert sequence.tuned_n(target) == pytest.approx(30)
    t_low, t_high = scipy.stats.t.interval(0.95, 29, loc=x.mean(axis=1), scale=scipy.stats.sem(x, axis=1))
    t_half = np.mean(t_high - t_low) / 2
    low, high = sequence.bounds(x, half_width=target)
    tuned = np.mean(high[:, -1] - low[:, -1]) / 2
    ulow, uhigh = sequence.bounds(x)
    untuned = np.mean(uhigh[:, -1] - ulow[:, -1]) / 2
    # on sd 10 of 100 the untuned sequence is about 2.9x the t interval at 30; tuned, about 2x
    assert tuned / t_half < 2.2 < untuned / t_half


def test_a_series_asking_for_six_points_stops_well_before_fifty_trials():
    # the series: two seats of fitness sd about 9 asked for +-6 with a ceiling of 50
    for mean, seed in ((60, 23), (53, 24)):
        x = _beta(mean, 9, (300, 50), seed)
        stop = sequence.stopping_times(x, 6.0)
        assert np.all(stop > 0) and np.median(stop) < 45


def test_a_narrower_target_never_stops_sooner():
    x = _beta(45, 12, (200, 120), 25)
    stops = [np.where((s := sequence.stopping_times(x, h)) > 0, s, 10_000) for h in (10.0, 6.0, 4.0, 3.0)]
    assert all(np.median(a) <= np.median(b) for a, b in itertools.pairwise(stops))
    assert np.median(stops[0]) < np.median(stops[-1])


def test_a_target_must_be_a_positive_number():
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            sequence.bounds([50.0, 60.0], half_width=bad)


@pytest.mark.parametrize("half_width", [5e-324, 2.2250738585072014e-308, 1e-160])
def test_any_target_above_zero_tunes_a_finite_sequence(half_width):
    # a target this narrow is valid input (any number above 0); its square underflowed to a division by
    # zero, a 500 on a series launch (schemathesis found it)
    from orchestrator.runs.series import waves

    assert math.isfinite(sequence.tuned_n(half_width))
    low, high = sequence.bounds(np.full(20, 40.0), half_width=half_width)
    assert np.all(low <= 40) and np.all(high >= 40)
    waves.first_wave(half_width, 10, 25.0, 0.0, 100.0, paired=False)
