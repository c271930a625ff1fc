"""The wave rule of a series with `until` (orchestrator.runs.series.waves): how many trials may be
scored or playing, and what the estimate says it plays on the reference population."""
from __future__ import annotations

import numpy as np
import pytest

from analytics import precision, sequence
from orchestrator.runs.series import waves


def test_the_first_wave_goes_before_any_score():
    assert waves.allowance(0, None, 5, 12) == 5
    assert waves.allowance(0, 3.0, 5, 12) == 5
    assert waves.allowance(0, None, 20, 12) == 12  # never above the ceiling


def test_later_waves_follow_the_width_and_at_most_double_the_evidence():
    assert waves.allowance(3, 0.5, 5, 100) == 5     # the first wave goes whole, whatever its first scores say
    assert waves.allowance(10, 1.2, 5, 100) == 15   # 10 x 1.2^2 = 14.4 trials needed
    assert waves.allowance(10, 3.0, 5, 100) == 20   # 90 needed, but a wave at most doubles the 10 scored
    assert waves.allowance(10, 0.5, 5, 100) == 11   # narrow already (a stop is on its way): one more at most
    assert waves.allowance(10, 1e200, 5, 100) == 20  # no overflow on a width far above the target
    assert waves.allowance(60, 3.0, 5, 100) == 100
    assert waves.allowance(4, None, 5, 100) == 5    # no sequence yet: the first wave


def test_a_loose_target_plays_two_trials():
    assert waves.first_wave(1e308, 12, 10.0, 0, 100) == waves.expected_trials(1e308, 12, 10.0, 0, 100) == 2
    assert waves.first_wave(1e308, 12, 10.0, 0, 100, paired=True) == 2


def test_the_wave_rule_plays_at_least_the_first_wave_and_at_most_the_ceiling():
    for half_width in (30, 10, 6):
        first = waves.first_wave(half_width, 60, 10.0, 0, 100)
        assert 2 <= first <= waves.expected_trials(half_width, 60, 10.0, 0, 100) <= 60
    # the same target costs more trials on a difference (twice the range, twice the variance)
    assert waves.first_wave(20, 60, 10.0, 0, 100, paired=True) > waves.first_wave(20, 60, 10.0, 0, 100)
    assert waves.expected_trials(1, 30, 10.0, 0, 100) == 30  # never reached: the ceiling


def test_a_sequences_first_widths_do_not_depend_on_the_scores_after():
    """waves keeps the reference widths and grows them: that relies on the sequence being predictable."""
    x = precision.reference_series(40, 10.0, 20)
    low, high = sequence.bounds(x, 0, 100)
    short_low, short_high = sequence.bounds(x[:, :16], 0, 100)
    np.testing.assert_array_equal(low[:, :16], short_low)
    np.testing.assert_array_equal(high[:, :16], short_high)


def test_a_ceiling_below_two_is_refused():
    with pytest.raises(ValueError):
        waves.expected_trials(5, 1, 10.0, 0, 100)
