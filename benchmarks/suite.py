"""Where the test suite's time goes: `make test`'s pytest run under a sampler of its whole process tree
(its Ray and Ray's workers, `studio serve` subprocesses, the browser), CPU summed by kind of process;
and what one Ray worker costs to start, a bare actor against the service's.

    python benchmarks/suite.py [--pytest-args "-q -n 2"] [--actor-repeats 3] [--every 0.5]

The suite's figures are one run (min = median = max); the actor starts are `--actor-repeats` each.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.figures import spread, target
from benchmarks.lib.procs import Sampler, cpu_of, machine_cpu_s

GOAL_S = 600  # `make test` under 10 minutes

# (what a process title contains, its kind), first match wins; a title is the command line, or
# `ray::<Class>.<method>` for a Ray worker once it runs something
KINDS = [("ray::DashboardAgent", "Ray's own"), ("ray::RuntimeEnvAgent", "Ray's own"), ("ray::", "Ray workers"),
         ("default_worker.py", "Ray workers"), ("gcs_server", "Ray's own"), ("raylet", "Ray's own"),
         ("log_monitor", "Ray's own"), ("dashboard", "Ray's own"), ("runtime_env", "Ray's own"),
         ("chrom", "Chromium"), ("stockfish", "Stockfish"), (" serve", "studio serve"),
         ("benchmarks/", "benchmark scripts"), ("pytest", "test processes"), ("sys.stdin", "test processes")]


def kind(title: str) -> str:
    return next((k for part, k in KINDS if part in title), "other")


def suite(pytest_args: list[str], every: float) -> dict:
    b0, i0 = machine_cpu_s()
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sampler = Sampler(proc.pid, every=every).start()
    out, _ = proc.communicate()
    wall = time.monotonic() - t0
    b1, i1 = machine_cpu_s()
    by_kind: dict[str, list] = {}
    titles, last_seen = sampler.titles(), sampler.mark().cpu
    for pid, cpu_s in last_seen.items():
        got = by_kind.setdefault(kind(titles.get(pid, "")), [0.0, 0])
        got[0] += cpu_s
        got[1] += 1
    sampler.stop()
    sampled = sum(c for c, _ in by_kind.values())
    last = out.strip().splitlines()[-1] if out.strip() else ""
    return {"exit_code": proc.returncode, "summary": last, "wall_s": spread([wall], "s", 1, samples=1),
            "machine_busy_cpu_s": spread([b1 - b0], "CPU-s", 1, samples=1),
            "machine_busy_fraction": round((b1 - b0) / max(b1 - b0 + i1 - i0, 1e-9), 3),
            "tree_cpu_s": spread([sampled], "CPU-s", 1, samples=1),
            "by_kind": {k: {"cpu_s": round(c, 1), "share": round(c / max(sampled, 1e-9), 3), "processes": n}
                        for k, (c, n) in sorted(by_kind.items(), key=lambda kv: -kv[1][0])}}


def actor_starts(repeats: int) -> dict:
    """CPU seconds a Ray worker process spends until its actor answers: a bare actor, the service's
    match worker and model worker (each imports the service), each in a fresh process."""
    import ray

    from orchestrator.workers import MatchWorker, init_ray, model_worker

    @ray.remote(num_cpus=0)
    class Bare:
        def pid(self) -> int:
            return os.getpid()

    init_ray(num_cpus=4)
    made = {"bare": lambda: Bare.remote(), "match_worker": lambda: MatchWorker.remote(),
            "model_worker": lambda: model_worker(None)}
    out: dict[str, list] = {k: [] for k in made}
    try:
        for _ in range(repeats):
            for name, make in made.items():
                actor = make()
                pid = ray.get(actor.pid.remote(), timeout=120)
                out[name].append(cpu_of(pid))
                ray.kill(actor)
    finally:
        ray.shutdown()
    return {k: spread(v, "CPU-s", 2, samples=len(v)) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pytest-args", default="-q -n 2", help="what `make test` passes pytest (default: the whole suite)")
    ap.add_argument("--actor-repeats", type=int, default=3)
    ap.add_argument("--every", type=float, default=0.5, help="seconds between samples of the process tree")
    a = ap.parse_args()
    from benchmarks.lib.raytmp import ray_tmpdir

    with ray_tmpdir("su"):
        starts = actor_starts(a.actor_repeats)
    ran = suite(shlex.split(a.pytest_args), a.every)
    wall = ran["wall_s"]["median"]
    print(json.dumps({
        "benchmark": "suite",
        "setup": {"pytest_args": a.pytest_args, "cpus": os.cpu_count(), "every_s": a.every},
        "figures": {"suite": ran, "ray_worker_start_cpu_s": starts},
        "targets": [target("the test suite's wall time", f"< {GOAL_S}", wall, "s", wall < GOAL_S and ran["exit_code"] == 0)],
    }, indent=1))


if __name__ == "__main__":
    main()
