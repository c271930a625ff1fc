"""The confidence sequence (analytics.sequence) against the authors' own code on fixed data, and the
properties the paper proves: it holds the mean at every n at once, only narrows, stays on the scale."""
import numpy as np
import pytest

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
