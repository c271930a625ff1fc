"""Does world-rollouts-1 grade decisions sensibly? The validation figures of docs/RUBRIC.md (Decision
grading), printed as one JSON object.

    python benchmarks/grading_validation.py [--matches 50] [--stability 10] [--horizon H] [--rollouts R]

Seeded base-world matches of the four scripted policies against anchors-v1, every seat graded: random
should grade lowest, accuracy should follow fitness_index (Spearman's rho), a seat that waits while it
starves with food in hand should be marked wrong, and another rollout seed should move little. Matches
are graded `--workers` at a time, one process each.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

POLICY_SEATS = ("local/random", "local/honest-trader", "local/greedy-harvester", "local/aggressive-raider")
SEASON = 300


def played(seed: int, seats=POLICY_SEATS, ticks: int = SEASON, anchors=("anchors-v1",)):
    """A scripted match played and archived the way a worker archives it: (events table, results)."""
    from engine.scenario import build_match, resolve_env, seat_specs

    env = resolve_env({"anchors": list(anchors)})
    env["seed"], env["spawn_seed"] = seed, seed + 7919
    m = build_match(ticks, env, seat_specs(list(seats)))
    m.run()
    return archived(m), m.results()


def archived(m):
    from analytics.archive.format import events_table

    meta = {"field": [{"name": a.name, "model": a.model, "anchor": a.anchor} for a in m.specs],
            "season_ticks": m.season_ticks, "seed": m.config.seed, "spawn_seed": m.config.spawn_seed}
    return events_table(f"m_{m.config.seed}", m.columns(), meta, m.messages)


def waiter(seed: int, ticks: int = 120):
    """An outside seat that only ever waits among the four policies, and the ticks its health fell from
    hunger: all of them, and those at whose start it still held food (raids can take its food)."""
    from engine.rules import RESOURCES
    from engine.scenario import build_match, resolve_env, seat_specs

    env = resolve_env({"anchors": ["anchors-v1"]})
    env["seed"], env["spawn_seed"] = seed, seed + 7919
    m = build_match(ticks, env, seat_specs(["test/waiter", *POLICY_SEATS]))
    food = RESOURCES.index("food")
    hunger, fed = [], []
    while not m.done:
        health = int(m.agents.health[0])
        held = int(m.agents.inv[0, food]) > 0
        m.submit({0: [{"action": "wait"}]} if m.agents.alive[0] == 1 else {})
        if m.agents.alive[0] == 1 or m.agents.death_tick[0] == m.tick - 1:
            if m.agents.health[0] < health or m.agents.death_tick[0] == m.tick - 1:
                hunger.append(m.tick - 1)
                if held:
                    fed.append(m.tick - 1)
    m.finish()
    return archived(m), hunger, fed


def grade_one(job: dict) -> dict:
    from analytics.grading import grade_match

    table, results = played(job["seed"])
    seats = list(range(len(POLICY_SEATS)))
    t0 = time.process_time()
    g = grade_match(table, None, seats, rollout_seed=job["rollout_seed"], horizon=job["horizon"],
                    rollouts=job["rollouts"])
    cpu = time.process_time() - t0
    return {"seed": job["seed"], "rollout_seed": job["rollout_seed"], "cpu_s": cpu,
            "accuracy": [g["seats"][s]["accuracy"] for s in seats],
            "labels": [[t["label"] for t in g["turns"] if t["seat"] == s] for s in seats],
            "fitness": [e["fitness_index"] for e in results["agents"]], "decisions": len(g["turns"])}


def grade_waiter(job: dict) -> dict:
    from analytics.grading import grade_match

    table, hunger, fed = waiter(job["seed"])
    g = grade_match(table, None, [0], rollout_seed=0, horizon=job["horizon"], rollouts=job["rollouts"])
    by_tick = {t["tick"]: t for t in g["turns"]}
    return {"seed": job["seed"], "hunger_turns": len(hunger),
            "labels": [by_tick[t]["label"] for t in fed if t in by_tick],
            "regrets": [by_tick[t]["regret"] for t in fed if t in by_tick],
            "foodless_labels": [by_tick[t]["label"] for t in hunger if t in by_tick and t not in fed]}


def spearman(x, y) -> dict:
    from scipy import stats

    rho = float(stats.spearmanr(x, y).statistic)
    n = len(x)
    se = math.sqrt((1 + rho * rho / 2) / (n - 3))  # Bonett and Wright (2000)
    z = math.atanh(rho)
    q = stats.norm.ppf(0.975)
    return {"rho": round(rho, 3), "low": round(math.tanh(z - q * se), 3), "high": round(math.tanh(z + q * se), 3),
            "n": n}


def main() -> None:
    from analytics.grading import HORIZON, ROLLOUTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=50)
    parser.add_argument("--stability", type=int, default=10)
    parser.add_argument("--waiters", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=HORIZON)
    parser.add_argument("--rollouts", type=int, default=ROLLOUTS)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    knobs = {"horizon": args.horizon, "rollouts": args.rollouts}
    jobs = [{"seed": 1000 + k, "rollout_seed": 0, **knobs} for k in range(args.matches)]
    jobs += [{"seed": 1000 + k, "rollout_seed": 1, **knobs} for k in range(args.stability)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        graded = list(pool.map(grade_one, jobs))
        waiting = list(pool.map(grade_waiter, [{"seed": 500 + k, **knobs} for k in range(args.waiters)]))
    wall = time.perf_counter() - t0
    first = [g for g in graded if g["rollout_seed"] == 0]
    again = {g["seed"]: g for g in graded if g["rollout_seed"] == 1}
    below = [all(g["accuracy"][0] < a for a in g["accuracy"][1:]) for g in first]
    pairwise = {p.split("/")[1]: round(sum(g["accuracy"][0] < g["accuracy"][k] for g in first) / len(first), 3)
                for k, p in enumerate(POLICY_SEATS) if k}
    acc = [a for g in first for a in g["accuracy"]]
    fit = [f for g in first for f in g["fitness"]]
    moves, kept = [], []
    for g in first:
        if g["seed"] in again:
            h = again[g["seed"]]
            moves += [abs(a - b) for a, b in zip(g["accuracy"], h["accuracy"])]
            for la, lb in zip(g["labels"], h["labels"]):
                kept += [x == y for x, y in zip(la, lb)]
    starving = [lab for w in waiting for lab in w["labels"]]
    bad = sum(lab in ("mistake", "blunder") for lab in starving)
    per_policy = {p.split("/")[1]: round(statistics.mean(g["accuracy"][k] for g in first), 2)
                  for k, p in enumerate(POLICY_SEATS)}
    decisions = sum(g["decisions"] for g in graded)
    cpu = sum(g["cpu_s"] for g in graded)
    rho = spearman(acc, fit)
    figures = {
        "mean_accuracy_by_policy": per_policy,
        "random_below_every_other_share": round(sum(below) / len(below), 3),
        "random_below_policy_share": pairwise,
        "spearman_accuracy_fitness": rho,
        "starving_waits": {"turns": len(starving), "mistake_or_blunder": bad,
                           "foodless_turns": sum(len(w["foodless_labels"]) for w in waiting),
                           "foodless_mistake_or_blunder": sum(lab in ("mistake", "blunder")
                                                              for w in waiting for lab in w["foodless_labels"]),
                           "regret_min_median": [min(r for w in waiting for r in w["regrets"]),
                                                 statistics.median(r for w in waiting for r in w["regrets"])]
                           if starving else None},
        "stability": {"seats": len(moves), "max_accuracy_move": round(max(moves), 2) if moves else None,
                      "mean_accuracy_move": round(statistics.mean(moves), 2) if moves else None,
                      "labels_kept_share": round(sum(kept) / len(kept), 3) if kept else None},
        "decisions_graded": decisions, "decisions_per_cpu_s": round(decisions / cpu, 1),
    }
    targets = [
        {"target": "random's mean decision accuracy over the series the lowest of the four policies",
         "goal": "lowest", "measured": per_policy,
         "met": per_policy["random"] < min(v for k, v in per_policy.items() if k != "random")},
        *({"target": f"matches where random's accuracy is below {name}'s", "goal": ">= 0.8", "measured": share,
           "met": share >= 0.8} for name, share in pairwise.items()),
        {"target": "Spearman's rho, mean decision accuracy vs fitness_index", "goal": ">= 0.5",
         "measured": rho["rho"], "met": rho["rho"] >= 0.5},
        {"target": "waits while health falls from hunger labelled mistake or blunder", "goal": "all",
         "measured": f"{bad}/{len(starving)}", "met": bool(starving) and bad == len(starving)},
    ]
    if moves:
        targets += [
            {"target": "largest move of a seat's accuracy under another rollout seed", "goal": "<= 2", "unit": "points",
             "measured": figures["stability"]["max_accuracy_move"], "met": max(moves) <= 2},
            {"target": "labels kept under another rollout seed", "goal": ">= 0.8",
             "measured": figures["stability"]["labels_kept_share"], "met": sum(kept) / len(kept) >= 0.8}]
    print(json.dumps({
        "benchmark": "grading_validation",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "workers": args.workers,
                    "load_avg_1m": round(os.getloadavg()[0], 2)},
        "grader": {**knobs, "matches": args.matches, "stability_matches": args.stability, "waiters": args.waiters},
        "wall_s": round(wall, 1), "figures": figures, "targets": targets,
    }, indent=1))


if __name__ == "__main__":
    main()
