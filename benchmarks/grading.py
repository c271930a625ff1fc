"""Decision grading at speed: world-rollouts-1 on a 300-tick base-world match with 8 graded seats
(two of each scripted policy) against anchors-v1. Prints one JSON object.

    python benchmarks/grading.py [--repeats 3] [--workers 2]

- decisions graded per second per core: one process grades the whole match; decisions over its CPU
  seconds (the rebuild of the state from the log included);
- wall time to grade the match on `--workers` cores: its decisions split into as many parts, each
  part graded in its own process (rebuild included, as a Ray task would), the parts merged.
The goal is the time the match takes to play with model seats at 1 s latency: 300 ticks, about 5 minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SEATS = tuple(f"local/{p}" for p in ("random", "honest-trader", "greedy-harvester", "aggressive-raider")) * 2
SEASON = 300
GOAL_S = 300


def match_table(seed: int):
    from analytics.archive.format import events_table
    from engine.scenario import build_match, resolve_env, seat_specs

    env = resolve_env({"anchors": ["anchors-v1"]})
    env["seed"], env["spawn_seed"] = seed, seed + 1
    m = build_match(SEASON, env, seat_specs(list(SEATS)))
    m.run()
    meta = {"field": [{"name": a.name, "model": a.model, "anchor": a.anchor} for a in m.specs],
            "season_ticks": SEASON, "seed": seed, "spawn_seed": seed + 1}
    return events_table(f"m_{seed}", m.columns(), meta, m.messages)


def grade_part(job: tuple) -> dict:
    from analytics.grading import grade_match

    seed, part = job
    table = match_table(seed)
    t0 = time.process_time()
    g = grade_match(table, None, list(range(len(SEATS))), decisions=part)
    return {"graded": g, "cpu_s": time.process_time() - t0}


def main() -> None:
    from analytics.grading import HORIZON, ROLLOUTS, decisions_of, merge
    from engine.warm import warm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    warm()
    seats = list(range(len(SEATS)))
    rates, walls, counts = [], [], []
    with ProcessPoolExecutor(args.workers) as pool:
        list(pool.map(grade_part, [(1, [(0, 0)])] * args.workers))  # each process loads the kernels once
        for r in range(args.repeats):
            seed = 100 + r
            todo = decisions_of(match_table(seed), seats)
            one = grade_part((seed, todo))
            rates.append(len(todo) / one["cpu_s"])
            t0 = time.perf_counter()
            parts = list(pool.map(grade_part, [(seed, todo[k::args.workers]) for k in range(args.workers)]))
            merged = merge([p["graded"] for p in parts], seats)
            walls.append(time.perf_counter() - t0)
            assert merged == one["graded"]  # parts graded apart give the grades of the whole
            counts.append(len(todo))
    wall = statistics.median(walls)
    print(json.dumps({
        "benchmark": "grading",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "workers": args.workers,
                    "load_avg_1m": round(os.getloadavg()[0], 2)},
        "grader": {"horizon_ticks": HORIZON, "rollouts": ROLLOUTS, "graded_seats": len(SEATS),
                   "field": len(SEATS) + 4, "season_ticks": SEASON},
        "repeats": args.repeats,
        "figures": {
            "decisions": {"min": min(counts), "max": max(counts)},
            "decisions_per_cpu_s": {"min": round(min(rates)), "median": round(statistics.median(rates)),
                                    "max": round(max(rates))},
            "wall_s_on_workers": {"min": round(min(walls), 2), "median": round(wall, 2), "max": round(max(walls), 2)},
        },
        "targets": [{"target": f"grade a {SEASON}-tick match with {len(SEATS)} graded seats on {args.workers} cores",
                     "goal": f"<= {GOAL_S}", "unit": "s", "measured": round(wall, 2), "met": wall <= GOAL_S}],
    }, indent=1))


if __name__ == "__main__":
    main()
