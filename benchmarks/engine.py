"""Engine speed, side by side in one run: compiled seasons, the same seasons interpreted, Crafter,
map generation, and `studio simulate` in a fresh process. Prints one JSON object.

    python benchmarks/engine.py [--quick]
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SIZES = (8, 16, 24)
SEASONS = (300, 2000)


def scripted_match(n_agents: int, ticks: int, seed: int = 1):
    """n_agents scripted agents: up to 8 anchors (anchors-v1 twice) and local/<policy> seats for the rest,
    the four policies in rotation."""
    from engine.kernels.codes import POLICIES
    from engine.scenario import build_match, resolve_env, seat_specs

    n_anchors = min(8, n_agents)
    env = resolve_env({"anchors": [POLICIES[k % 4] for k in range(n_anchors)]})
    env["seed"], env["spawn_seed"] = seed, seed + 1
    seats = seat_specs([f"local/{POLICIES[k % 4]}" for k in range(n_agents - n_anchors)])
    return build_match(ticks, env, seats)


def time_seasons(repeats: int) -> dict:
    """agent-steps per second, best-of and median over repeats, full event log written."""
    out = {}
    for n in SIZES:
        for ticks in SEASONS:
            scripted_match(n, ticks).run()  # warm-up (JIT)
            times, rows = [], 0
            for r in range(repeats):
                m = scripted_match(n, ticks, seed=r + 1)
                t0 = time.perf_counter()
                m.run()
                times.append(time.perf_counter() - t0)
                rows = m.rows
            med = statistics.median(times)
            out[f"{n}x{ticks}"] = {"agents": n, "ticks": ticks, "seconds_median": med,
                                   "agent_steps_per_s": n * ticks / med, "events": rows}
    return out


def child_interpreted(quick: bool) -> dict:
    """The same seasons with NUMBA_DISABLE_JIT=1, in a subprocess (the flag is read at import)."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    args = [sys.executable, __file__, "--interpreted"] + (["--quick"] if quick else [])
    res = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def interpreted(quick: bool) -> dict:
    out = {}
    for n in SIZES:
        for ticks in SEASONS:
            if quick and ticks > 300:
                continue
            m = scripted_match(n, ticks)
            t0 = time.perf_counter()
            m.run()
            sec = time.perf_counter() - t0
            out[f"{n}x{ticks}"] = {"seconds": sec, "agent_steps_per_s": n * ticks / sec, "events": m.rows}
    return out


def crafter_steps(seconds: float = 3.0) -> dict:
    import crafter
    import numpy as np

    env = crafter.Env(seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        _, _, done, _ = env.step(int(rng.integers(env.action_space.n)))
        steps += 1
        if done:
            env.reset()
    return {"steps_per_s": steps / (time.perf_counter() - t0), "agents": 1, "policy": "random"}


def mapgen_ms(repeats: int = 200) -> dict:
    import numpy as np

    from engine import rules
    from engine.kernels.rng import derive
    from engine.kernels.state import new_tables
    from engine.kernels.worldgen import generate, place_spawns
    from engine.match import multipliers

    n = 24
    side = rules.map_side(n)
    arr = rules.rule_arrays()
    mm, mr = multipliers({})
    tb = new_tables(side, np.zeros(n, dtype=np.int64), 100, 60, 3, n * 3, 16)
    generate(np.array([derive(0, 1)]), tb.terrain, tb.tiles, arr["res_max"], arr["res_regen"], mm, mr)
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        generate(np.array([derive(r, 1)]), tb.terrain, tb.tiles, arr["res_max"], arr["res_regen"], mm, mr)
        place_spawns(np.array([derive(r, 2)]), tb.terrain, n, rules.WORLD["spawn_min_distance"], tb.ag)
        times.append(time.perf_counter() - t0)
    return {"side": side, "agents": n, "ms_median": 1e3 * statistics.median(times), "ms_max": 1e3 * max(times)}


def simulate_wall_s() -> dict:
    cmd = [os.path.join(os.path.dirname(sys.executable), "studio"), "simulate", "--scenario", "svc:custom-base-v1",
           "--json"]
    subprocess.run(cmd, capture_output=True, check=True)  # warms the JIT cache on disk
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        runs.append(time.perf_counter() - t0)
    return {"seconds_median": statistics.median(runs), "runs": runs}


def main() -> None:
    quick = "--quick" in sys.argv
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core: the target is per core
    if "--interpreted" in sys.argv:
        print(json.dumps(interpreted(quick)))
        return
    compiled = time_seasons(repeats=3 if quick else 7)
    interp = child_interpreted(quick)
    craft = crafter_steps(1.0 if quick else 3.0)
    gen = mapgen_ms()
    sim = simulate_wall_s()
    speedups = {k: compiled[k]["agent_steps_per_s"] / v["agent_steps_per_s"] for k, v in interp.items()}
    at24 = min(compiled[f"24x{t}"]["agent_steps_per_s"] for t in SEASONS)
    best = max(v["agent_steps_per_s"] for v in compiled.values())
    targets = [
        {"target": "agent-steps/s at 24 agents (slowest season length)", "goal": ">= 5000000",
         "measured": round(at24), "unit": "agent-steps/s", "met": at24 >= 5e6},
        {"target": "compiled vs interpreted (smallest speed-up)", "goal": ">= 50", "unit": "x",
         "measured": round(min(speedups.values()), 1), "met": min(speedups.values()) >= 50},
        {"target": "map generation plus spawn, 24-agent map", "goal": "<= 2", "unit": "ms",
         "measured": round(gen["ms_median"], 3), "met": gen["ms_median"] <= 2},
        {"target": "studio simulate wall time, warm JIT cache", "goal": "<= 3", "unit": "s",
         "measured": round(sim["seconds_median"], 2), "met": sim["seconds_median"] <= 3},
    ]
    print(json.dumps({
        "benchmark": "engine",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "cores_used": 1},
        "figures": {
            "compiled": {k: {"agent_steps_per_s": round(v["agent_steps_per_s"]), "seconds": round(v["seconds_median"], 5),
                             "events": v["events"]} for k, v in compiled.items()},
            "interpreted": {k: {"agent_steps_per_s": round(v["agent_steps_per_s"]), "seconds": round(v["seconds"], 3)}
                            for k, v in interp.items()},
            "speedup_x": {k: round(v, 1) for k, v in speedups.items()},
            "crafter_random_steps_per_s": round(craft["steps_per_s"]),
            "ratio_vs_crafter_x": round(best / craft["steps_per_s"], 1),
            "mapgen_spawn_ms": {"median": round(gen["ms_median"], 3), "max": round(gen["ms_max"], 3),
                                "map_side": gen["side"]},
            "simulate_wall_s": round(sim["seconds_median"], 3),
            "units": "agent_steps_per_s: agent-steps per second; seconds: wall seconds per season",
        },
        "targets": targets,
    }, indent=1))


if __name__ == "__main__":
    main()
