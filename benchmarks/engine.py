"""Engine speed guarded against regressions: a paired A/B of this working tree against a base commit.

The base (`--base`, default HEAD~1) is checked out into a temporary git worktree. Fresh processes run
the base (A) and this tree (B) alternately, the order swapped every pair so a steady drift favours
neither; each loads its own tree's kernels, plays the seeded seasons once untimed, then times them.
The verdict is on living agent-steps per CPU second (a busy machine inflates CPU time far less than
wall time), pair by pair: within noise when the median ratio B / A reaches RATIO_GOAL or the ratios
span 1. The absolute rates are information only (issue 28). `--crafter` adds Crafter's random policy.

    python benchmarks/engine.py [--base REF] [--pairs N] [--repeats N] [--quick] [--crafter]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.lib.figures import spread, target

CONFIGS = ((24, 300), (256, 300))
MATCHES = {24: 40, 256: 4}  # seasons per timed repeat (distinct seeds)
RATIO_GOAL = 0.95
CRAFTER_GOAL = 10_000


def scripted_match(n_agents: int, ticks: int, seed: int):
    """n_agents scripted agents: up to 8 anchors (anchors-v1 twice) and local/<policy> seats for the rest,
    the four policies in rotation."""
    from engine.kernels.codes import POLICIES
    from engine.scenario import build_match, resolve_env, seat_specs

    n_anchors = min(8, n_agents)
    env = resolve_env({"anchors": [POLICIES[k % 4] for k in range(n_anchors)]})
    env["seed"], env["spawn_seed"] = seed, seed + 1
    seats = seat_specs([f"local/{POLICIES[k % 4]}" for k in range(n_agents - n_anchors)])
    return build_match(ticks, env, seats)


def living_steps(m) -> int:
    a = m.agents
    return int(sum(m.tick if a.alive[i] == 1 else int(a.death_tick[i]) + 1 for i in range(m.n)))


def engine_once(n: int, ticks: int, seed: int) -> dict:
    """MATCHES[n] seasons back to back, each built and played inside the timed region. A season is short
    enough that a lone one per repeat would measure the machine's jitter (a page fault, a timer tick)
    more than the engine; a set of distinct seeds does not."""
    w0, c0 = time.perf_counter(), time.process_time()
    steps = events = 0
    for k in range(MATCHES[n]):
        m = scripted_match(n, ticks, seed * 1000 + k)
        m.run()
        steps += living_steps(m)
        events += m.rows
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"wall_s": wall, "cpu_s": cpu, "living_steps": steps, "all_steps": MATCHES[n] * n * ticks,
            "events": events / MATCHES[n], "rate": steps / wall, "cpu_rate": steps / cpu}


# -- one side of a pair, in its own process ---------------------------------------------------------
def child(tree: str, configs, repeats: int) -> dict:
    """Runs in a fresh process: the engine package is imported from `tree`, nothing else is."""
    sys.path.insert(0, tree)
    import engine

    assert os.path.dirname(os.path.dirname(os.path.abspath(engine.__file__))) == os.path.abspath(tree), engine.__file__
    try:
        from engine.warm import warm
    except ImportError:  # a base older than the warm-up: the untimed pass below compiles
        warm = None
    if warm:
        warm()
    for n, ticks in configs:
        engine_once(n, ticks, 999)  # first touch of the code and the allocator
    return {f"{n}x{ticks}": [engine_once(n, ticks, seed=r + 1) for r in range(repeats)] for n, ticks in configs}


def side(tree: str, cache: str | None, quick: bool, repeats: int) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    if cache:  # the variable this repo's kernels read first, and Numba's own for older trees
        env.update(STUDIO_NUMBA_CACHE=cache, NUMBA_CACHE_DIR=cache)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", tree, "--repeats", str(repeats)]
    out = subprocess.run(cmd + (["--quick"] if quick else []), env=env, capture_output=True, text=True, cwd=tree,
                         check=False)
    if out.returncode != 0:
        raise SystemExit(f"engine.py: the measurement on {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, check=True).stdout.strip()


def paired(base: str, pairs: int, repeats: int, quick: bool, configs) -> dict:
    from engine.kernels.jit import cache_root

    sha = git("rev-parse", "--verify", f"{base}^{{commit}}")
    tmp = tempfile.mkdtemp(prefix="studio-engine-ab-")
    tree = os.path.join(tmp, "base")
    git("worktree", "add", "--detach", tree, sha)
    try:
        # Numba trusts a cached kernel only while its source file keeps the mtime (and size) it was
        # compiled from; a fresh checkout's files get new ones. Stamped with a time derived from their
        # content, the base's kernels compile once per distinct source, whichever commit brings it,
        # into a cache root of their own (this tree keeps its usual one).
        for d, _, files in os.walk(tree):
            for f in files:
                path = os.path.join(d, f)
                with open(path, "rb") as fh:
                    stamp = 1_000_000_000 + int(hashlib.sha256(fh.read()).hexdigest()[:7], 16)
                os.utime(path, (stamp, stamp))
        cache = f"{cache_root()}-ab-base"
        a_runs, b_runs = [], []
        for k in range(pairs):  # A B, B A, A B, ...: a drift that runs one way all along cancels too
            for which in ((0, 1) if k % 2 == 0 else (1, 0)):
                if which == 0:
                    a_runs.append(side(tree, cache, quick, repeats))
                else:
                    b_runs.append(side(ROOT, None, quick, repeats))
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree], capture_output=True, check=False)
        subprocess.run(["git", "-C", ROOT, "worktree", "prune"], capture_output=True, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"sha": sha, "a": a_runs, "b": b_runs,
            "engine_differs": subprocess.run(["git", "-C", ROOT, "diff", "--quiet", sha, "--", "engine",
                                              "analytics/scorecards.py"], check=False).returncode != 0}


def middle(run: dict, key: str) -> dict:
    """A process's median repeat by CPU rate (the lower middle one of an even count)."""
    return sorted(run[key], key=lambda x: x["cpu_rate"])[(len(run[key]) - 1) // 2]


def side_figures(runs: list[dict], key: str) -> dict:
    """One side's absolute figures: each process's median repeat, then min / median / max over processes."""
    per = [middle(r, key) for r in runs]
    return {
        "living_agent_steps_per_cpu_s": spread([x["cpu_rate"] for x in per], "agent-steps per CPU second", 0),
        "living_agent_steps_per_s": spread([x["rate"] for x in per], "agent-steps/s", 0),
        "wall_s": spread([x["wall_s"] for x in per], "s", 5),
        "cpu_share_of_one_core": spread([x["cpu_s"] / x["wall_s"] for x in per], "share", 3),
        "living_share_of_agent_steps": spread([x["living_steps"] / x["all_steps"] for x in per], "share", 3),
        "events": spread([x["events"] for x in per], "rows per season", 0),
    }


# -- Crafter and `studio simulate`, this tree only ---------------------------------------------------
def crafter_once(n: int, ticks: int, seed: int) -> dict:
    """n Crafter worlds x ticks random actions; worldgen and resets inside the timed region."""
    import crafter
    import numpy as np

    rng = np.random.default_rng(seed)
    steps = deaths = 0
    w0 = time.perf_counter()
    for k in range(n):
        env = crafter.Env(seed=seed * 1000 + k)
        env.reset()
        actions = rng.integers(env.action_space.n, size=ticks)
        for t in range(ticks):
            _, _, done, _ = env.step(int(actions[t]))
            steps += 1
            if done:
                deaths += 1
                env.reset()
    wall = time.perf_counter() - w0
    # what the pixels cost it: the renderer alone, on the last world's state, as step() calls it
    r0 = time.perf_counter()
    for _ in range(50):
        env.render()
    render_s = (time.perf_counter() - r0) / 50
    return {"wall_s": wall, "steps": steps, "deaths": deaths, "rate": steps / wall, "render_ms": 1e3 * render_s}


def crafter_figures(configs, repeats: int) -> tuple[dict, list]:
    from engine.warm import warm

    warm()
    for n, ticks in configs:
        engine_once(n, ticks, 999)
    figures, targets = {}, []
    for n, ticks in configs:
        pairs = []
        for r in range(repeats):  # interleaved: a slow spell of the machine hits both sides
            pairs.append((engine_once(n, ticks, seed=r + 1), crafter_once(n, ticks, seed=r + 1)))
        ratios = [e["rate"] / c["rate"] for e, c in pairs]
        cs = [c for _, c in pairs]
        figures[f"{n}x{ticks}"] = {
            "crafter_random_steps_per_s": spread([c["rate"] for c in cs], "steps/s", 0),
            "crafter_wall_s": spread([c["wall_s"] for c in cs], "s", 3),
            "crafter_deaths": spread([c["deaths"] for c in cs], "deaths", 0),
            "crafter_render_ms_per_step": spread([c["render_ms"] for c in cs], "ms", 3),
            "crafter_render_share_of_step": spread([c["render_ms"] / 1e3 * c["rate"] for c in cs], "share", 3),
            "ratio_vs_crafter_x": spread(ratios, "x", 0,
                                         note="engine living agent-steps/s over Crafter steps/s, per repeat"),
        }
        med = statistics.median(ratios)
        targets.append(target(f"engine vs Crafter random policy at {n} x {ticks}", f">= {CRAFTER_GOAL}",
                              round(med), "x", med >= CRAFTER_GOAL))
    return figures, targets


def simulate_wall_s() -> list[float]:
    """`studio simulate` in a fresh process with the kernel cache warm: imports, load, play, print."""
    cmd = [os.path.join(os.path.dirname(sys.executable), "studio"), "simulate", "--scenario", "svc:custom-base-v1",
           "--json"]
    subprocess.run(cmd, capture_output=True, check=True)  # fills the kernel cache if it is cold
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        runs.append(time.perf_counter() - t0)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD~1", help="the commit to compare against (default HEAD~1)")
    parser.add_argument("--pairs", type=int, default=None, help="A/B pairs of processes (default 5, 2 with --quick)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed repeats per process (default 3, 1 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="the 24-agent configuration only, fewer pairs and repeats, no `studio simulate`")
    parser.add_argument("--crafter", action="store_true", help="also compare with Crafter's random policy")
    parser.add_argument("--child", metavar="TREE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    configs = CONFIGS[:1] if args.quick else CONFIGS
    pairs = args.pairs or (2 if args.quick else 5)
    repeats = args.repeats or (1 if args.quick else 3)
    if args.child:
        print(json.dumps(child(args.child, configs, repeats)))
        return
    load = round(os.getloadavg()[0], 2)
    ab = paired(args.base, pairs, repeats, args.quick, configs)
    figures, targets = {}, []
    for n, ticks in configs:
        key = f"{n}x{ticks}"
        ratios = [middle(b, key)["cpu_rate"] / middle(a, key)["cpu_rate"] for a, b in zip(ab["a"], ab["b"])]
        same = all(x[key][0]["living_steps"] == y[key][0]["living_steps"] and x[key][0]["events"] == y[key][0]["events"]
                   for x, y in zip(ab["a"], ab["b"]))
        figures[key] = {
            "base": side_figures(ab["a"], key),
            "this_tree": side_figures(ab["b"], key),
            "paired_ratio": {**spread(ratios, "ratio", 3), "pairs": [round(r, 3) for r in ratios],
                             "note": "this tree's living agent-steps per CPU second over the base's, per pair "
                                     "of processes run back to back"},
            "same_play": same,
        }
        med = statistics.median(ratios)
        spans = min(ratios) <= 1 <= max(ratios)
        targets.append(target(f"engine speed at {n} agents x {ticks} ticks against {args.base}, paired",
                              f">= {RATIO_GOAL} median paired ratio, or the pairs span 1", round(med, 3),
                              "ratio", med >= RATIO_GOAL or spans, pairs_span_1=spans))
    if args.crafter:
        more, crafter_targets = crafter_figures(configs, repeats)
        for key, figs in more.items():
            figures[key].update(figs)
        targets += crafter_targets
    if not args.quick:
        sim = simulate_wall_s()
        figures["simulate_wall_s"] = spread(sim, "s", 3)
        med = statistics.median(sim)
        targets.append(target("studio simulate wall time, fresh process, warm kernel cache", "<= 3", round(med, 2),
                              "s", med <= 3))
    print(json.dumps({
        "benchmark": "engine",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "threads": 1,
                    "affinity": "none forced", "load_avg_1m": load},
        "base": {"ref": args.base, "commit": ab["sha"][:12], "engine_differs": ab["engine_differs"]},
        "this_tree": {"commit": git("rev-parse", "--short=12", "HEAD"),
                      "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no"))},
        "pairs": pairs, "repeats_per_process": repeats, "order": "A B, B A, A B, ... (A the base, B this tree)",
        "seasons_per_repeat": {f"{n}x{t}": MATCHES[n] for n, t in configs},
        "units": {"wall_s": "wall seconds per repeat: MATCHES seasons, each built and played",
                  "per process": "each process's median repeat; min / median / max over the processes"},
        "figures": figures,
        "targets": targets,
    }, indent=1))


if __name__ == "__main__":
    main()
