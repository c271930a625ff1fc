"""Forks (docs/FORKS.md) at speed, through the service in this process (Studio with play=True,
real Ray, `--workers` workers). Prints one JSON object.

    python benchmarks/forks.py [--workers 2] [--repeats 5] [--trials 20]

The original is a base-world run of four scripted seats against anchors-v1, forked with seat 0 handed
to local/random. Measured: a fork's start (admission, the worker's rebuild, the first continued tick;
queueing and the Ray call are benchmarks/series.py's), a forked series with control against as many
runs played from scratch, and the docs' example fork's effect on seat 0.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIG = "[plans.lab]\nrequests_per_minute = 1000000\n[limits]\nrefused_per_address_per_minute = 1000000\n"
ROSTER = [{"model": f"local/{p}"} for p in ("greedy-harvester", "honest-trader", "aggressive-raider", "random")]
SEASON, FORK_TICK, EXAMPLE_TICK = 300, 150, 100
HANDED = {0: {"model": "local/random"}}


def spread(values: list[float], digits: int = 1) -> dict:
    return {"min": round(min(values), digits), "median": round(statistics.median(values), digits),
            "max": round(max(values), digits)}


def fork_start_ms(core, principal, run_id: str) -> float:
    """One fork request to its first continued tick, every cache empty: the admission (the original's log
    read from the archive and rebuilt once to check it), the worker's start (read and rebuilt to the
    fork's tick) and that tick played."""
    from analytics.archive.store import Archive
    from orchestrator.play import fork as play_fork
    from orchestrator.play.job import Job
    from orchestrator.play.world import seat_specs
    from orchestrator.runs.admission import forks
    from orchestrator.runs.admission.admit import admit

    forks._REPLAYED.clear()
    play_fork._original.cache_clear()
    play_fork._rebuilt.cache_clear()
    play_fork._turns.cache_clear()
    body = {"fork": {"run_id": run_id, "tick": FORK_TICK, "seats": {"0": HANDED[0]}}}
    t0 = time.perf_counter()
    adm = admit(core, principal, body, launching=False)
    eff = adm.trial_envs[0]
    job = Job(run_id="bench", match_id="bench", data_dir="", season_ticks=eff["season_ticks"], env=eff["env"],
              seats=adm.seats, meta={"fork": {**adm.fork.runs[0],
                                              "archive": Archive.of(core.data_dir, core.config).location}})
    match = play_fork.new_match(job, seat_specs)
    match.run(until=FORK_TICK + 1)
    elapsed = 1e3 * (time.perf_counter() - t0)
    assert match.tick == FORK_TICK + 1
    return elapsed


def timed_series(studio, launched: dict) -> dict:
    return studio.wait_series(launched["batch"]["batch_id"], timeout_s=3600)["batch"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--series-repeats", type=int, default=3)
    args = parser.parse_args()

    from api.python import Studio
    from engine.warm import warm
    from orchestrator import accounts, auth
    from orchestrator.core import Core

    warm()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        (data / "config.toml").write_text(CONFIG)
        core = Core.open(data)
        accounts.create_account(core, "bench@example.com", plan="lab", verified=True)
        token, _ = auth.mint(core, "bench@example.com", scopes=auth.SCOPES)
        principal = auth.authenticate(core, token)
        with Studio(data, token, play=True, workers=args.workers) as studio:
            original = studio.launch_run(scenario_id="svc:custom-base-v1", season_ticks=SEASON, roster=ROSTER,
                                         env={"seed": 11, "spawn_seed": 12})["run"]["run_id"]
            assert studio.wait(original, timeout_s=600)["run"]["status"] == "finished"
            starts = [fork_start_ms(core, principal, original) for _ in range(args.repeats)]

            # the service's summary task and every worker started once, before anything is timed
            timed_series(studio, studio.fork(original, FORK_TICK, seats=HANDED, trials=2, control=True))
            fork_s, scratch_s = [], []
            for _ in range(args.series_repeats):  # interleaved: drift on a shared machine hits both
                t0 = time.perf_counter()
                fork_batch = timed_series(studio, studio.fork(original, FORK_TICK, seats=HANDED, trials=args.trials,
                                                              control=True))
                fork_s.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                timed_series(studio, studio.launch_run(scenario_id="svc:custom-base-v1", season_ticks=SEASON,
                                                       trials=2 * args.trials, roster=[HANDED[0], *ROSTER[1:]],
                                                       env={"seed": 11}))
                scratch_s.append(time.perf_counter() - t0)

            example = studio.fork(original, EXAMPLE_TICK, seats=HANDED, trials=args.trials, control=True)
            example_batch = timed_series(studio, example)
    effect = {e["metric"]: {k: e[k] for k in ("mean", "low", "high", "n", "method")} for e in example_batch["effect"]}
    start = statistics.median(starts)
    print(json.dumps({
        "benchmark": "forks",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "workers": args.workers,
                    "load_avg_1m": round(os.getloadavg()[0], 2)},
        "original": {"season_ticks": SEASON, "roster": [s["model"] for s in ROSTER], "anchors": "anchors-v1"},
        "repeats": args.repeats,
        "figures": {
            "fork_start_ms": {**spread(starts), "unit": "ms", "fork_tick": FORK_TICK},
            "forked_series_s": {**spread(fork_s, 2), "unit": "s", "runs": 2 * args.trials,
                                "ticks_each": SEASON - FORK_TICK, "counts": fork_batch["counts"]},
            "from_scratch_s": {**spread(scratch_s, 2), "unit": "s", "runs": 2 * args.trials, "ticks_each": SEASON},
        },
        "example": {"fork_tick": EXAMPLE_TICK, "seat": 0, "from": ROSTER[0]["model"], "to": HANDED[0]["model"],
                    "trials": args.trials, "effect": effect},
        "targets": [
            {"target": f"fork request to first continued tick, {SEASON}-tick match forked at {FORK_TICK}",
             "goal": "<= 1000", "unit": "ms", "measured": round(start, 1), "met": start <= 1000},
            {"target": f"{args.trials}-trial forked series with control, against its {2 * args.trials} runs from scratch",
             "goal": f"<= from scratch ({statistics.median(scratch_s):.2f} s)", "unit": "s",
             "measured": round(statistics.median(fork_s), 2),
             "met": statistics.median(fork_s) <= statistics.median(scratch_s)},
        ],
    }, indent=1))


if __name__ == "__main__":
    main()
