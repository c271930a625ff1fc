"""Which interval a metric's mean gets: the rubric scores bounded to the 0..100 scale, the method per
metric and number of trials that benchmarks/coverage.py chose for them (CHOICE), the method of a paired
difference, and the methods' names as results show them."""

from __future__ import annotations

# Below this many trials BCa undercovers on skewed data (82% at N=5 against 88%
# for t, see shared notes); from here on the bootstrap's freedom from the
# normality assumption is worth more.
BCA_MIN_N = 30

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
