"""The confidence sequence on the engine's own score distributions, over the populations of
benchmarks/coverage.py: the share of series whose sequence ever excludes the true mean (the promise:
at most GOAL), untuned and with its bets tuned to a target as the service's stopping rule runs it; its
width against the fixed-n interval the summary reports; what a series launched with `until` plays and
costs against the fixed N the estimate advises (scripted seats priced as models at the price table's
fallback); and the issue's series played afresh through the engine. The asymptotic confidence sequence
(Waudby-Smith et al. 2021, Theorem 2.2) is measured beside it as the candidate second method.

    python benchmarks/sequential.py [--reps 1000] [--n 200] [--series 40]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics import choice, intervals, precision, sequence, stats  # noqa: E402
from analytics.data import DIMENSIONS  # noqa: E402
from orchestrator.seats.prices import estimate as price_estimate  # noqa: E402

METRICS = ("fitness_index", *DIMENSIONS)
WIDTH_NS = (10, 30, 100)
TARGET = 3.0          # fitness points, the half-width asked for
TUNED_N = 30          # the tuned sequence's width is read at this n, tuned for it
T_GOAL = 1.6          # the most the tuned half-width at TUNED_N may be, in t half-widths there
W1 = {"seats": ("local/greedy-harvester", "local/honest-trader"), "season_ticks": 60, "half_width": 6.0,
      "ceiling": 50, "world": "svc:custom-base-v1", "first_seed": 100_001}
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
    low, high = sequence.bounds(x)
    done = (high - low) / 2 <= TARGET
    untuned = np.where(done.any(axis=1), done.argmax(axis=1) + 1, n)
    fl, fh = _fixed_n(x[:, :fixed], "fitness_index")
    return {"sd_points": round(float(pop.std(ddof=1)), 3),
            "until_trials": _spread(played, "trials", 1), "until_usd": _spread(played * usd, "USD", 2),
            "until_share_reached_by_ceiling": round(float(np.mean(stop > 0)), 4),
            "untuned_until_trials": _spread(untuned, "trials", 1),
            "fixed_trials": fixed, "fixed_usd": round(fixed * usd, 2),
            "fixed_n_half_width": _spread((fh - fl) / 2, "points", 3),
            "fixed_n_share_within_target": round(float(np.mean((fh - fl) / 2 <= TARGET)), 4),
            "until_over_fixed_trials_median": round(float(np.median(played)) / fixed, 3)}


def tuned_target() -> float:
    """The half-width whose tuned trial count is TUNED_N (sequence.tuned_n), in points."""
    return 100 * sequence.REFERENCE_SPREAD * math.sqrt(2 * math.log(2 / 0.05) / TUNED_N)


def _t_half(x: np.ndarray) -> np.ndarray:
    """scipy's fixed-n 95% t interval's half-width of each row."""
    low, high = scipy.stats.t.interval(0.95, x.shape[1] - 1, loc=x.mean(axis=1), scale=scipy.stats.sem(x, axis=1))
    return (high - low) / 2


def asymptotic_bounds(x: np.ndarray, t_star: int, lo: float = 0.0, hi: float = 100.0, alpha: float = 0.05):
    """The asymptotic confidence sequence of Waudby-Smith et al., "Time-uniform central limit theory and
    asymptotic confidence sequences" (2021), Theorem 2.2: mean +- sd x sqrt(2(t r^2 + 1) / (t^2 r^2) x
    log(sqrt(t r^2 + 1) / alpha)), r tuned for t_star (their eq. for rho), running intersection, clipped
    to the scale; nothing claimed from one score."""
    t = np.arange(1, x.shape[1] + 1)
    mean = np.cumsum(x, axis=1) / t
    sd = np.sqrt(np.maximum(np.cumsum(x ** 2, axis=1) / t - mean ** 2, 0))
    r2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / t_star
    half = sd * np.sqrt(2 * (t * r2 + 1) / (t ** 2 * r2) * np.log(np.sqrt(t * r2 + 1) / alpha))
    low, high = np.clip(mean - half, lo, hi), np.clip(mean + half, lo, hi)
    low[:, 0], high[:, 0] = lo, hi
    return np.maximum.accumulate(low, axis=1), np.minimum.accumulate(high, axis=1)


def _at_stop(low, high, truth: float, target: float) -> dict:
    """Series stopped when the sequence is first within target: trials played, and whether the
    sequence they stopped with holds the truth (series that never got there are left out)."""
    done = (high - low) / 2 <= target
    hit = done.any(axis=1)
    at = done.argmax(axis=1)
    rows = np.flatnonzero(hit)
    held = (low[rows, at[rows]] <= truth) & (truth <= high[rows, at[rows]])
    return {"stopped": int(rows.size), "held": float(held.mean()) if rows.size else None,
            "trials": (at[rows] + 1).tolist()}


def _tuned_cell(pop: np.ndarray, metric: str, reps: int, n: int, seed: int) -> dict:
    """The tuned sequence (target tuned_target()) on one population: coverage at every n, its
    half-width at TUNED_N against scipy's t; for fitness also the asymptotic sequence and both at the
    stopping time of W1's target."""
    rng = np.random.default_rng(seed)
    truth = pop.mean()
    x = pop[rng.integers(0, pop.size, (reps, n))]
    target = tuned_target()
    low, high = sequence.bounds(x, half_width=target)
    t_half = float(np.mean(_t_half(x[:, :TUNED_N])))
    out = {"ever_excluded": float(((low > truth) | (high < truth)).any(axis=1).mean()),
           "ratio_t": float(np.mean(high[:, TUNED_N - 1] - low[:, TUNED_N - 1]) / 2 / t_half)}
    if metric == "fitness_index":
        h = W1["half_width"]
        sl, sh = sequence.bounds(x, half_width=h)
        al, ah = asymptotic_bounds(x, TUNED_N)
        out["stop"] = _at_stop(sl, sh, truth, h)
        out["asymptotic"] = {"ever_excluded": float(((al > truth) | (ah < truth)).any(axis=1).mean()),
                             "ratio_t": float(np.mean(ah[:, TUNED_N - 1] - al[:, TUNED_N - 1]) / 2 / t_half),
                             "stop": _at_stop(al, ah, truth, h)}
    return out


def w1_series(count: int) -> tuple[dict, np.ndarray]:
    """The issue's series played afresh through the engine, `count` times (seeds from W1's first_seed
    on, each trial its own map and spawns as the service draws them): trials played until both seats'
    tuned sequences are within the target, and what the untuned sequence would have needed; also every
    score played, (seat, score), a population of the world's own scores."""
    from engine.simulate import simulate

    played, untuned, widths, pool = [], [], [], []
    seed = W1["first_seed"]
    for _ in range(count):
        scores = np.empty((2, W1["ceiling"]))
        for k in range(W1["ceiling"]):
            r = simulate(W1["world"], seed=seed, spawn_seed=seed, ticks=W1["season_ticks"], seats=list(W1["seats"]))
            scores[:, k] = [a["fitness_index"] for a in r["agents"]]
            seed += 1
        pool.append(scores)
        stop = sequence.stopping_times(scores, W1["half_width"])
        played.append(int(stop.max()) if np.all(stop > 0) else W1["ceiling"] + 1)
        low, high = sequence.bounds(scores)
        widths.append(float(((high - low) / 2)[:, -1].max()))
        done = ((high - low) / 2 <= W1["half_width"]).all(axis=0)
        untuned.append(int(done.argmax()) + 1 if done.any() else W1["ceiling"] + 1)
    return {"series": count, "precise_before_ceiling": float(np.mean(np.asarray(played) <= W1["ceiling"])),
            "trials_played": _spread(np.minimum(played, W1["ceiling"]), "trials", 1),
            "untuned_precise_before_ceiling": float(np.mean(np.asarray(untuned) <= W1["ceiling"])),
            "untuned_widest_half_width_at_ceiling": _spread(widths, "points", 2)}, np.concatenate(pool, axis=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--series", type=int, default=40, help="W1 series played through the engine")
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

    tuned = {m: {f"{w} {seat}": _tuned_cell(pops[w][s, :, cov.METRICS.index(m)], m, args.reps, args.n,
                                           5000 + 1000 * mi + 10 * cov.WORLDS.index(w) + s)
                 for w in cov.WORLDS for s, seat in enumerate(cov.SEATS)} for mi, m in enumerate(METRICS)}
    w1, w1_pool = w1_series(args.series)
    w1_cells = {seat: _tuned_cell(w1_pool[k], "fitness_index", args.reps, W1["ceiling"], 9000 + k)
                for k, seat in enumerate(W1["seats"])}
    fit = {**tuned["fitness_index"], **{f"W1 {k}": c for k, c in w1_cells.items()}}
    tuned_cov = {m: _spread([c["ever_excluded"] for c in tuned[m].values()], "share of series") for m in METRICS}
    tuned_worst = max(max(c["max"] for c in tuned_cov.values()),
                      max(c["ever_excluded"] for c in w1_cells.values()))
    ratio = _spread([c["ratio_t"] for c in fit.values()], "sequence half-width / t half-width at n=30", 2)

    def stop_figures(key: str) -> dict:
        cells = [c[key]["stop"] if key else c["stop"] for c in fit.values()]
        # a population none of whose series stopped (a short --n) has no share to give
        return {"held_at_stop": _spread([c["held"] for c in cells if c["held"] is not None], "share of stopped series"),
                "trials": _spread([t for c in cells for t in c["trials"]], "trials", 1)}
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
            # the sequence the service runs: bets tuned to the target (here tuned for TUNED_N trials)
            "tuned": {"target_points": round(tuned_target(), 3), "tuned_n": TUNED_N, "coverage": tuned_cov,
                      "coverage_w1_scores": {k: round(c["ever_excluded"], 4) for k, c in w1_cells.items()},
                      "fitness_half_width_over_t_at_30": ratio,
                      "ratio_t_by_population": {k: round(c["ratio_t"], 3) for k, c in fit.items()},
                      f"stopped_at_{W1['half_width']:g}_points": stop_figures("")},
            "asymptotic": {"method": "asymptotic confidence sequence (Waudby-Smith et al. 2021, Theorem 2.2), "
                           f"tuned for {TUNED_N} trials, sample sd, running intersection",
                           "ever_excluded": _spread([c["asymptotic"]["ever_excluded"] for c in fit.values()],
                                                    "share of series"),
                           "fitness_half_width_over_t_at_30": _spread([c["asymptotic"]["ratio_t"] for c in fit.values()],
                                                                      "sequence half-width / t half-width at n=30", 2),
                           f"stopped_at_{W1['half_width']:g}_points": stop_figures("asymptotic")},
            "w1_series_through_the_engine": {**W1, "seats": list(W1["seats"]), **w1},
        },
        "seconds": {"populations": round(generated, 2), "total": round(time.perf_counter() - started, 2)},
        "targets": [
            {"target": "coverage", "goal": f"share of series ever excluding the true mean <= {GOAL} for every metric "
                     f"and population, n up to {args.n}", "measured": round(worst, 4), "unit": "share of series",
             "met": bool(worst <= GOAL)},
            {"target": "tuned coverage", "goal": f"share of series whose tuned sequence ever excludes the true mean "
                     f"<= {GOAL}, every metric and population and W1's own scores", "measured": round(tuned_worst, 4),
             "unit": "share of series", "met": bool(tuned_worst <= GOAL)},
            {"target": "width at n=30", "goal": f"the default sequence's half-width at n={TUNED_N}, tuned for it, "
                     f"within {T_GOAL}x the fixed-n t interval's (fitness, median over populations)",
             "measured": ratio["median"], "unit": "x t half-width", "met": bool(ratio["median"] <= T_GOAL)},
            {"target": "W1 series", "goal": f"until +-{W1['half_width']:g} on {' + '.join(W1['seats'])}, "
                     f"{W1['season_ticks']}-tick seasons, stops precise before its ceiling of {W1['ceiling']}",
             "measured": w1["precise_before_ceiling"], "unit": "share of series played through the engine",
             "met": bool(w1["precise_before_ceiling"] == 1.0)},
        ],
    }, default=str))


if __name__ == "__main__":
    main()
