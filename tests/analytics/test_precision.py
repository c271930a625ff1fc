"""The estimate's precision figure: what the series summary's fitness interval will be at n trials."""
from itertools import pairwise

import numpy as np
import pytest

from analytics import choice, precision, stats
from orchestrator.runs.admission.admit import REFERENCE_SD
from orchestrator.runs.service import _precision

NS = range(1, 51)  # the Lab plan's longest series is 50 trials


def test_more_trials_never_look_less_precise_and_every_n_names_its_method():
    figures = [_precision(n) for n in NS]
    assert figures[0]["half_width_95"] is None and figures[0]["method"] == precision.SINGLE_RUN
    assert figures[0]["single_run_half_width_95"] == pytest.approx(1.959964 * REFERENCE_SD, abs=1e-3)
    widths = [f["half_width_95"] for f in figures[1:]]
    # every method the summary uses narrows with n, and each switch of method goes to a narrower one
    assert all(b < a for a, b in pairwise(widths)), widths
    for n, f in zip(NS, figures):
        assert f["method"] == (precision.SINGLE_RUN if n == 1 else choice.method_for("fitness_index", n))
        assert f["reference_sd"] == REFERENCE_SD
    # the figures the old t-times-ratio formula gave for 2, 4 and 10 trials (177.0, 31.3, 7.2) were not
    # widths the summary ever shows: its 2-trial interval cannot exceed the 0..100 scale
    assert widths[0] <= 50.0 and figures[3]["half_width_95"] < 45 and figures[9]["half_width_95"] < 7.1


def test_the_figure_is_the_width_the_summary_produces_at_each_n():
    """Fresh series from the reference population (Beta, mean 50, sd 10), each through the summary's own
    interval (mean_interval with metric=fitness_index, as analytics.summary calls it): the mean
    half-width agrees with the figure within 4 standard errors of that mean and within 10%."""
    rng = np.random.default_rng(29)
    series = 100
    for n in NS[1:]:
        figure = _precision(n)["half_width_95"]
        x = rng.beta(12, 12, (series, n)) * 100
        got = []
        for row in x:
            iv = stats.mean_interval(row, metric="fitness_index")
            assert iv.method == choice.METHOD_NAMES[_precision(n)["method"]]
            got.append((iv.high - iv.low) / 2)
        got = np.array(got)
        se = got.std(ddof=1) / np.sqrt(series)
        assert abs(got.mean() - figure) <= max(4 * se, 1e-3), (n, figure, got.mean(), se)
        assert got.mean() == pytest.approx(figure, rel=0.10)


def test_reference_population_has_the_stated_spread_and_series_extend_with_n():
    x = precision.reference_series(40, REFERENCE_SD, series=4000)
    assert x.mean() == pytest.approx(precision.REFERENCE_MEAN, abs=0.2)
    assert x.std() == pytest.approx(REFERENCE_SD, rel=0.02)
    assert 0 <= x.min() and x.max() <= 100
    np.testing.assert_array_equal(precision.reference_series(7, REFERENCE_SD)[:, :5], precision.reference_series(5, REFERENCE_SD))


def test_precision_without_a_metric_keeps_the_t_formula():
    p = precision.precision_half_width(10, 10.0)
    assert p.method == "t" and p.half_width == pytest.approx(2.262157 * 10 / 10 ** 0.5, rel=1e-6)
    assert precision.precision_half_width(1, 10.0, metric="fitness_index").method == precision.SINGLE_RUN


def test_the_console_estimate_reads_one_run_and_a_series():
    """The console's estimate block formats half_width_95, which is null for one run."""
    from api.console.pages import TEMPLATES

    template = TEMPLATES.env.get_template("estimate.html")
    base = {"agent_turns": 1, "usd": {"low": 0, "high": 0}, "spend_cap_usd": None, "seats": [],
            "wall_clock_ms": {"low": 1, "high": 2}, "quota": {"agent_turns_remaining": None}}
    one = template.render(est={**base, "trials": 1, "precision": _precision(1)})
    assert "one run gives no interval: it may land ±19.6 points" in one
    four = template.render(est={**base, "trials": 4, "precision": _precision(4)})
    assert f"mean fitness index within ±{_precision(4)['half_width_95']:.1f} points" in four
