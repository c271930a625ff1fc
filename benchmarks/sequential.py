"""The confidence sequence (analytics.sequence) on the engine's own score distributions.

Populations: those of benchmarks/coverage.py (600 seeded matches of local/honest-trader +
local/random on the base world and on svc:harvest-commons; each seat's 600 scores a population
whose mean is the truth). For fitness_index and the five dimensions, 2,000 series of 200 trials
are drawn with replacement per population and the share whose sequence EVER excludes the true
mean, at any n up to 200, is counted (the promise: at most 5%).

Also measured: the sequence's width at n = 10, 30, 100 against the fixed-n interval the summary
reports at that n (choice.CHOICE's method); and, for two scripted seats of different spreads (the
honest trader and the random policy on svc:harvest-commons, fitness_index), how many trials a series
launched `until: {half_width: 3}` plays (ceiling 200) and what it costs, against the fixed N the
estimate advises for +-3 points (the smallest N whose precision.half_width_95 at the reference spread
is <= 3). Scripted seats are free, so USD is priced as if each trial's seat were a model at the price
table's fallback price for a 300-tick season (the estimate's high end).

Prints one JSON object. Usage: python benchmarks/sequential.py [--reps 2000] [--n 200]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics import choice, intervals, precision, sequence, stats  # noqa: E402
from analytics.data import DIMENSIONS  # noqa: E402
from orchestrator.seats.prices import estimate as price_estimate  # noqa: E402

METRICS = ("fitness_index", *DIMENSIONS)
WIDTH_NS = (10, 30, 100)
TARGET = 3.0          # fitness points, the half-width asked for
GOAL = 0.05           # the most series whose sequence may ever exclude the mean
POLICIES = (("svc:harvest-commons", 0), ("svc:harvest-commons", 1))  # (world, seat of coverage.SEATS)
PRICED_AS = {"model": "unpriced/model", "provider": "router"}  # the price table's fallback price
SEASON_TICKS = 300


def _coverage_module():
    """benchmarks/coverage.py by path: run as a script, its name would shadow the `coverage` package."""
    spec = importlib.util.spec_from_file_location("studio_coverage_bench", Path(__file__).with_name("coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _spread(values, unit: str, digits: int = 4) -> dict:
    v = np.asarray(values, dtype=float)
    return {"unit": unit, "min": round(float(v.min()), digits), "median": round(float(np.median(v)), digits),
            "max": round(float(v.max()), digits)}


def _fixed_n(x: np.ndarray, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-n interval the summary reports for these series (rows) at their length."""
    method = choice.method_for(metric, x.shape[1])
    fn = intervals.METHODS[method]
    if method in intervals.BOOTSTRAP:
        return fn(x, 0.95, *choice.SCALE, n_resamples=stats.DEFAULT_RESAMPLES,
                  rng=np.random.default_rng(stats.DEFAULT_SEED))
    return fn(x, 0.95, *choice.SCALE)


def _population_cell(pop: np.ndarray, metric: str, reps: int, n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    truth = pop.mean()
    x = pop[rng.integers(0, pop.size, (reps, n))]
    low, high = sequence.bounds(x)
    missed = ((low > truth) | (high < truth)).any(axis=1)
    widths = {}
    for k in WIDTH_NS:
        if k > n:
            continue
        fl, fh = _fixed_n(x[:, :k], metric)
        widths[k] = {"sequence": float(np.mean(high[:, k - 1] - low[:, k - 1])), "fixed_n": float(np.mean(fh - fl)),
                     "fixed_n_method": choice.method_for(metric, k)}
    return {"ever_excluded": float(missed.mean()), "widths": widths}


def advised_n(target: float, limit: int = 1000) -> int:
    """The estimate's advice: the fewest trials whose expected fitness half-width is <= target."""
    for n in range(2, limit + 1):
        if precision.precision_half_width(n, 10.0, metric="fitness_index").half_width <= target:
            return n
    return limit


def _savings(pop: np.ndarray, reps: int, n: int, fixed: int, usd: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    x = pop[rng.integers(0, pop.size, (reps, n))]
    stop = sequence.stopping_times(x, TARGET)
    played = np.where(stop > 0, stop, n)
    fl, fh = _fixed_n(x[:, :fixed], "fitness_index")
    return {"sd_points": round(float(pop.std(ddof=1)), 3),
            "until_trials": _spread(played, "trials", 1), "until_usd": _spread(played * usd, "USD", 2),
            "until_share_reached_by_ceiling": round(float(np.mean(stop > 0)), 4),
            "fixed_trials": fixed, "fixed_usd": round(fixed * usd, 2),
            "fixed_n_half_width": _spread((fh - fl) / 2, "points", 3),
            "fixed_n_share_within_target": round(float(np.mean((fh - fl) / 2 <= TARGET)), 4),
            "until_over_fixed_trials_median": round(float(np.median(played)) / fixed, 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    started = time.perf_counter()
    cov = _coverage_module()
    pops = {w: cov.population(w) for w in cov.WORLDS}
    generated = time.perf_counter() - started

    cells = {}
    for mi, metric in enumerate(METRICS):
        col = cov.METRICS.index(metric)
        cells[metric] = {f"{w} {seat}": _population_cell(pops[w][s, :, col], metric, args.reps, args.n,
                                                          1000 * mi + 10 * cov.WORLDS.index(w) + s)
                         for w in cov.WORLDS for s, seat in enumerate(cov.SEATS)}
    coverage = {m: _spread([c["ever_excluded"] for c in cells[m].values()], "share of series") for m in METRICS}
    widths = {m: {k: {"sequence": _spread([c["widths"][k]["sequence"] for c in cells[m].values()], "points", 2),
                      "fixed_n": _spread([c["widths"][k]["fixed_n"] for c in cells[m].values()], "points", 2),
                      "fixed_n_method": choice.method_for(m, k),
                      "ratio": _spread([c["widths"][k]["sequence"] / c["widths"][k]["fixed_n"]
                                        for c in cells[m].values()], "sequence width / fixed-n width", 2)}
                  for k in WIDTH_NS if k <= args.n} for m in METRICS}

    usd = price_estimate([PRICED_AS], SEASON_TICKS, 1)["high"]
    fixed = advised_n(TARGET)
    fi = cov.METRICS.index("fitness_index")
    savings = {f"{w} {cov.SEATS[s]}": _savings(pops[w][s, :, fi], args.reps, args.n, fixed, usd, 7 + s)
               for w, s in POLICIES}
    worst = max(c["max"] for c in coverage.values())
    print(json.dumps({
        "benchmark": "sequential",
        "setup": {"method": sequence.METHOD, "grid": sequence.GRID, "confidence": 0.95, "series_per_population": args.reps,
                  "trials_per_series": args.n, "populations": [f"{w} {s}" for w in cov.WORLDS for s in cov.SEATS],
                  "matches_per_population": cov.MATCHES, "target_half_width_points": TARGET,
                  "usd_per_trial": {"value": usd, "unit": "USD", "priced_as": "one model seat at the price table's "
                                    f"fallback price, {SEASON_TICKS}-tick season, the estimate's high end"},
                  "cpus": os.cpu_count()},
        "figures": {
            # over the 4 populations: the share of series whose sequence ever excluded the true mean
            "coverage": coverage,
            # mean full widths over each population's series, spread over the 4 populations
            "widths": widths,
            # per seat: spread over its series
            "until_vs_fixed": {"advised_fixed_n": fixed, **savings},
        },
        "seconds": {"populations": round(generated, 2), "total": round(time.perf_counter() - started, 2)},
        "targets": [
            {"target": "coverage", "goal": f"share of series ever excluding the true mean <= {GOAL} for every metric "
                     f"and population, n up to {args.n}", "measured": round(worst, 4), "unit": "share of series",
             "met": bool(worst <= GOAL)},
        ],
    }, default=str))


if __name__ == "__main__":
    main()
