"""Model seats at speed: the whole seat path (prompt, HTTP, parse, validate, step) against a loopback
provider in its own process, on one client core: turns/s with the provider answering at once, one tick
of 16 seats, and 20 concurrent 8-seat matches against their ideal turns/s. Prints one JSON object.

The provider is tests/seats/fake_provider.py's lean app (one fixed tool-call reply, no request checks:
its own CPU would otherwise add to the latency being simulated), on the other cores, so it shares
neither the client's core nor its event loop.

    python benchmarks/seats.py [--quick]
"""
from __future__ import annotations

import asyncio
import contextlib
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
SEASON = 60


class Provider:
    """tests/seats/fake_provider.py in a child process; the delay is fixed per process."""

    def __init__(self, delay_ms: int, cpus: set[int], lean: bool = False):
        args = [sys.executable, "-m", "tests.seats.fake_provider", "--delay-ms", str(delay_ms)]
        if lean:
            args.append("--lean")
        if cpus:
            args += ["--cpus", ",".join(map(str, sorted(cpus)))]
        self.proc = subprocess.Popen(args, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.base_url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}/v1"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()  # the server exits when its stdin closes
        self.proc.wait(timeout=20)


def new_match(seats: int, ticks: int, seed: int):
    from engine.scenario import build_match, resolve_env, seat_specs

    env = resolve_env({"anchors": ["anchors-v1"]})
    env["seed"], env["spawn_seed"] = seed, seed + 1
    return build_match(ticks, env, seat_specs([f"bench/model-{i}" for i in range(seats)]))


async def players(stack, base_url: str, match, timeout_ms: int = 30000) -> dict:
    """The match's model seats, each with its own pooled client, as the run loop builds them."""
    from orchestrator.seats import SeatPlayer, new_client

    out = {}
    for i in match.external:
        client = await stack.enter_async_context(new_client(private_ok=True))  # the double is on the loopback
        out[i] = SeatPlayer(i, {"model": f"bench/model-{i}", "provider": "router",
                                "skills": [{"text": "Gather early, trade fairly."}], "instructions": "Never raid."},
                            key="k", client=client, base_url=base_url, turn_timeout_ms=timeout_ms,
                            actions_per_turn=match.apt)
    return out


async def play_ticks(base_url: str, match, ticks: int) -> list:
    from orchestrator.seats import play_tick

    async with contextlib.AsyncExitStack() as stack:
        ps = await players(stack, base_url, match)
        return [await play_tick(match, ps) for _ in range(min(ticks, match.season_ticks - match.tick))]


async def turns_per_second(base_url: str, seconds: float) -> dict:
    """Ticks of 8-seat matches back to back; a fresh match every SEASON ticks, since the benchmark
    provider's fixed reply (gather, move north) starves seats after ~80 ticks. Only ticks are timed."""
    from orchestrator.seats import play_tick

    await play_ticks(base_url, new_match(8, 50, 1), 5)  # warm: imports, JIT, caches
    turns, played, seed = 0, 0.0, 2
    while played < seconds:
        async with contextlib.AsyncExitStack() as stack:
            match = new_match(8, SEASON, seed)
            ps = await players(stack, base_url, match)
            t0 = time.perf_counter()
            while not match.done:
                report = await play_tick(match, ps)
                assert not report.waits, report.waits
                turns += len(report.usage)
            played += time.perf_counter() - t0
        seed += 1
    return {"turns": turns, "seconds": played, "turns_per_s": turns / played}


async def sixteen_seat_tick(base_url: str, ticks: int) -> dict:
    reports = await play_ticks(base_url, new_match(16, 100, 3), ticks + 1)
    times = [r.elapsed_ms for r in reports[1:]]  # the first tick also opens 16 connections
    assert not any(r.waits for r in reports)
    return {"ms_median": statistics.median(times), "ms_max": max(times), "ticks": len(times)}


async def concurrent_matches(base_url: str, matches: int, ticks: int) -> dict:
    await asyncio.gather(*(play_ticks(base_url, new_match(8, 10, 100 + k), 1) for k in range(matches)))
    built = [new_match(8, ticks, 10 + k) for k in range(matches)]
    t0 = time.perf_counter()
    runs = await asyncio.gather(*(play_ticks(base_url, m, ticks) for m in built))
    wall = time.perf_counter() - t0
    turns = sum(len(r.usage) for reports in runs for r in reports)
    waits = sum(len(r.waits) for reports in runs for r in reports)
    return {"turns": turns, "seconds": wall, "turns_per_s": turns / wall, "waits": waits}


def main() -> None:
    quick = "--quick" in sys.argv
    load = [round(x, 2) for x in os.getloadavg()]  # other work on the machine shows here
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    client_core = {cores[0]} if cores else set()
    server_cores = set(cores[1:]) or client_core
    if client_core:
        os.sched_setaffinity(0, client_core)  # the seat path on one core: the target is per core
    with Provider(0, server_cores, lean=True) as p:
        fast = asyncio.run(turns_per_second(p.base_url, 3.0 if quick else 8.0))
    with Provider(200, server_cores, lean=True) as p:
        tick16 = asyncio.run(sixteen_seat_tick(p.base_url, 5 if quick else 10))
    with Provider(100, server_cores, lean=True) as p:
        # repeated: on a shared machine one pass can land on a busy moment; met is judged on the median
        passes = [asyncio.run(concurrent_matches(p.base_url, 20, 20 if quick else 50)) for _ in range(3)]
    many = sorted(passes, key=lambda r: r["turns_per_s"])[1]
    best = max(r["turns_per_s"] for r in passes)
    ideal = 20 * 8 / 0.1
    targets = [
        {"target": "agent turns/s through the whole seat path, provider answering at once", "goal": ">= 500",
         "unit": "turns/s", "measured": round(fast["turns_per_s"]), "met": fast["turns_per_s"] >= 500},
        {"target": "one tick of 16 model seats, provider answering after 200 ms (median)", "goal": "<= 260",
         "unit": "ms", "measured": round(tick16["ms_median"], 1), "met": tick16["ms_median"] <= 260},
        {"target": "20 concurrent 8-seat matches, 100 ms provider latency: aggregate turns/s",
         "goal": f">= {0.8 * ideal:.0f} (80% of {ideal:.0f}), median of 3 passes", "unit": "turns/s",
         "measured": round(many["turns_per_s"]), "met": many["turns_per_s"] >= 0.8 * ideal},
    ]
    print(json.dumps({
        "benchmark": "seats",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "loadavg_at_start": load,
                    "client_cores": len(client_core) or None, "provider_cores": len(server_cores) or None},
        "figures": {
            "loopback_turns_per_s": {"turns": fast["turns"], "seconds": round(fast["seconds"], 2),
                                     "turns_per_s": round(fast["turns_per_s"])},
            "tick_16_seats_200ms": {"ms_median": round(tick16["ms_median"], 1), "ms_max": round(tick16["ms_max"], 1),
                                    "ticks": tick16["ticks"]},
            "matches_20x8_100ms": {"turns": many["turns"], "seconds": round(many["seconds"], 2),
                                   "turns_per_s": round(many["turns_per_s"]), "best_of_3_turns_per_s": round(best),
                                   "passes_turns_per_s": [round(r["turns_per_s"]) for r in passes],
                                   "ideal_turns_per_s": ideal,
                                   "fraction_of_ideal": round(many["turns_per_s"] / ideal, 3), "waits": many["waits"]},
            "units": "turns/s: agent turns per second of wall time; ms: wall milliseconds per tick",
        },
        "targets": targets,
    }, indent=1))


if __name__ == "__main__":
    main()
