"""Scripted matches kept as their inputs: what a derived log costs to serve, and what the archive
saves. Prints one JSON object.

The same matches of the base world are played by the workers' own code into an archive that stores
their logs and one that derives them. Per match, in this process: the engine alone, the derived log
served cold (played again, verified and cached: what a page, grader or notebook pays the first time),
served again from the cache, and read from the stored archive.

    python benchmarks/derived.py [--matches 40] [--ticks 300]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.figures import spread, target

KEY = "bat_bench"


def jobs(n: int, ticks: int, keep_log: bool, archive: str) -> list:
    from benchmarks.series import body
    from engine.scenario import resolve_env
    from orchestrator.play import Job

    b = body(n, ticks)
    seats = [{"name": f"s{k}", "model": s["model"], "provider": "local"} for k, s in enumerate(b["roster"])]
    out = []
    for k in range(n):
        env = dict(resolve_env(b["env"]), seed=10_000 + k, spawn_seed=20_000 + k)
        out.append(Job(run_id=f"run{k}", match_id=f"m{k:05d}", data_dir="", season_ticks=ticks, env=env,
                       seats=seats, meta={"scenario_id": b["scenario_id"], "batch_id": KEY, "node_id": "bench"},
                       archive=archive, keep_log=keep_log))
    return out


def archive_of(root: Path, n: int, ticks: int, keep_log: bool):
    """The matches played and archived as a scripted worker does, in chunks of 8, then published."""
    from analytics.archive.store import Archive
    from orchestrator.play import play_job
    from orchestrator.play.job import land_chunk

    store = Archive(str(root))
    todo = jobs(n, ticks, keep_log, str(root))
    for i in range(0, n, 8):
        land_chunk([(j, play_job(j, pack=False)) for j in todo[i:i + 8]])
    store.compact(KEY, [j.match_id for j in todo])
    return store, todo


def size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def engine_ms(job) -> float:
    from engine.scenario import build_match, seat_specs

    t0 = time.perf_counter()
    m = build_match(job.season_ticks, job.env, seat_specs([s["model"] for s in job.seats]))
    m.run()
    m.results()
    return 1000 * (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--matches", type=int, default=40)
    p.add_argument("--ticks", type=int, default=300)
    a = p.parse_args()
    from analytics.archive.cache import DerivedCache
    from analytics.archive.store import Archive
    from engine.warm import warm

    warm()
    tmp = Path(tempfile.mkdtemp(prefix="studio-derived-bench-"))
    try:
        stored, todo = archive_of(tmp / "stored", a.matches, a.ticks, True)
        archive_of(tmp / "derived", a.matches, a.ticks, False)
        derived = Archive(str(tmp / "derived"), cache=DerivedCache(tmp / "cache", 1 << 30))
        engine_alone, cold, warm_read, stored_read, ratios = [], [], [], [], []
        for job in todo:
            e = engine_ms(job)
            t0 = time.perf_counter()
            got = derived.events(job.match_id, KEY)
            c = 1000 * (time.perf_counter() - t0)
            t0 = time.perf_counter()
            derived.events(job.match_id, KEY)
            w = 1000 * (time.perf_counter() - t0)
            t0 = time.perf_counter()
            want = stored.events(job.match_id, KEY)
            s = 1000 * (time.perf_counter() - t0)
            assert got.equals(want, check_metadata=True), job.match_id
            engine_alone.append(e), cold.append(c), warm_read.append(w), stored_read.append(s), ratios.append(c / e)
        stored_bytes, derived_bytes = size(tmp / "stored"), size(tmp / "derived")
        ratio = statistics.median(ratios)
        out = {
            "benchmark": "derived",
            "setup": {"matches": a.matches, "agents": 24, "ticks": a.ticks, "cpus": os.cpu_count(),
                      "python": platform.python_version(),
                      "note": "one process, matches one after another; the machine may be shared"},
            "figures": {
                "engine_alone_ms_per_match": spread(engine_alone, "ms", note="build, play, score"),
                "derived_log_served_cold_ms": spread(cold, "ms", note="Archive.events of a match not in the cache: "
                                                     "record read, played again, verified, cached"),
                "derived_log_served_cached_ms": spread(warm_read, "ms"),
                "stored_log_read_ms": spread(stored_read, "ms", note="the same match's log from the stored archive"),
                "cold_over_engine_alone": spread(ratios, "x", note="per match"),
                "archive_bytes_per_match": {
                    "stored": {"value": round(stored_bytes / a.matches), "unit": "bytes"},
                    "derived": {"value": round(derived_bytes / a.matches), "unit": "bytes"},
                    "saved": {"value": round(1 - derived_bytes / stored_bytes, 3), "unit": "fraction"}},
            },
            "targets": [target("a derived log served (a match not in the cache) over the engine's time for that "
                               "match", "<= 3", round(ratio, 2), "x", ratio <= 3)],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
