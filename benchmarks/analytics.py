"""Analytics speed over a generated data dir (>= 10 million events in >= 2,000 matches): scorecards
recomputed from events, the Bradley-Terry leaderboard with 1,000 bootstrap resamples, a series
summary, on one core: DuckDB threads=1, Arrow and Numba one thread, BLAS one thread. Prints one JSON
object; the forest plot of the same data goes to a temporary directory unless --plot names a file.

    python benchmarks/analytics.py [--data-dir DIR] [--repeats N] [--plot PATH]

The data dir is generated once (scripted matches played and archived by the service's own code,
two processes) and cached under /tmp, so reruns only time the analytics.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core: read before numpy and numba load
import platform
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The data it measures must be what today's code writes: the cached dir is keyed by the engine's
# kernel sources and the archive's writers and layout, so a change to either generates anew (a dir
# keyed by hand once kept measuring 2,000 per-match files after series were compacted into one).
DATA_SOURCES = ("analytics/archive/format.py", "analytics/archive/store.py", "analytics/archive/layout.py",
                "orchestrator/sample.py", "orchestrator/play/world.py", "orchestrator/play/job.py")


def default_dir() -> str:
    from engine.kernels.jit import cache_key

    digest = hashlib.sha256(cache_key().encode())
    for name in DATA_SOURCES:
        digest.update((ROOT / name).read_bytes())
    return f"/tmp/studio-analytics-bench-{digest.hexdigest()[:12]}"
# 20 series of 100 seeds: every series shares the seeds, so configurations pair on them.
N_SERIES, SEEDS_PER_SERIES = 20, 100
SCENARIOS = {
    "base": {},
    "lush": {"resources": {"food": {"max": 2, "regen": 2}, "wood": {"regen": 1.5}}},
    "scarce": {"resources": {"food": {"regen": 0.5}, "wood": {"max": 0.5}}},
    "relics": {"resources": {"relics": {"max": 3, "regen": 5}, "ore": {"max": 1.5, "regen": 1.5}}},
}
ROSTERS = (
    ("honest-trader", "greedy-harvester", "aggressive-raider", "random", "honest-trader", "greedy-harvester"),
    ("greedy-harvester", "honest-trader", "random", "aggressive-raider", "greedy-harvester", "honest-trader"),
)
TARGETS = {"scorecard_recompute_s": 2.0, "leaderboard_1000_resamples_s": 3.0}


def series_plan(b: int) -> dict:
    scenario = sorted(SCENARIOS)[b % len(SCENARIOS)]
    return {"batch_id": f"bat_{b:02d}", "scenario_id": scenario, "env": SCENARIOS[scenario],
            "roster": ROSTERS[(b // len(SCENARIOS)) % len(ROSTERS)]}


def _play_one_series(args) -> int:
    data_dir, b = args
    from orchestrator.sample import local_seats, play_series

    plan = series_plan(b)
    play_series(data_dir, plan["batch_id"], local_seats(plan["roster"]), range(SEEDS_PER_SERIES),
                scenario_id=plan["scenario_id"], env=plan["env"])
    return b


def ensure_data(data_dir: str) -> dict:
    """Generate the data dir unless a complete one is cached; returns its manifest."""
    path = Path(data_dir)
    manifest = path / "complete.json"
    if manifest.exists():
        return json.loads(manifest.read_text())
    path.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
        list(pool.map(_play_one_series, [(data_dir, b) for b in range(N_SERIES)]))
    import duckdb

    from analytics.archive.layout import COMPACT_GLOB, EVENTS_DIR, archive_dir

    glob = str(archive_dir(path) / EVENTS_DIR / COMPACT_GLOB)
    events, matches = duckdb.connect().execute(
        "SELECT count(*), count(DISTINCT match_id) FROM read_parquet(?)", [glob]).fetchone()
    info = {"events": int(events), "matches": int(matches), "series": N_SERIES,
            "generate_s": round(time.perf_counter() - t0, 2)}
    manifest.write_text(json.dumps(info))
    return info


def timed(fn, repeats: int) -> tuple[list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def figure(times: list[float], unit: str = "s") -> dict:
    return {"min": round(min(times), 3), "median": round(statistics.median(times), 3), "max": round(max(times), 3),
            "repeats": [round(t, 3) for t in times], "unit": unit}


def target(goal: float, measured: float, events: int) -> dict:
    """Met only when measured on at least 10 million events."""
    return {"goal_s": goal, "measured_s": measured, "events": events, "met": measured < goal and events >= 10_000_000}


def mismatches(cards, seats) -> int:
    """Cells where the recomputed scorecard differs from the stored seat row (0 expected)."""
    from analytics.scorecards import achievement_names

    joined = seats.merge(cards, on=["match_id", "seat"], suffixes=("", "_re"), how="outer", indicator=True)
    bad = int((joined["_merge"] != "both").sum())
    for col in ("rank", "fitness_index", "grade", "archetype", "status", "crafter_score", "survival", "economy",
                "social", "competitiveness", "exploration", "net_worth", "ticks_alive", "trades", "partners",
                "raids_won", "raids_lost", "raids_repelled", "relics", "tiles_seen", "refused"):
        bad += int((joined[col] != joined[f"{col}_re"]).sum())
    bad += sum(list(a) != achievement_names(m) for a, m in zip(joined["achievements"], joined["achievement_mask"]))
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="default: /tmp, keyed by the code that writes it")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plot", default=None, help="where to save the forest plot (default: a temp dir)")
    args = parser.parse_args()
    args.data_dir = args.data_dir or default_dir()
    info = ensure_data(args.data_dir)
    plot = args.plot or os.path.join(tempfile.mkdtemp(prefix="studio-bench-"), "forest.png")

    import duckdb
    import pyarrow

    from analytics.compare import leaderboard
    from analytics.data import open_data_dir
    from analytics.figures import seat_forest
    from analytics.scorecards import recompute_scorecards
    from analytics.summary import series_summary

    t0 = time.perf_counter()
    pyarrow.set_cpu_count(1)
    data = open_data_dir(args.data_dir, con=duckdb.connect(":memory:", config={"threads": 1}))
    threads = data.con.execute("SELECT current_setting('threads')").fetchone()[0]
    open_s = time.perf_counter() - t0
    # The first call loads the compiled kernels from Numba's on-disk cache (or compiles them).
    first, _ = timed(lambda: recompute_scorecards(data), 1)
    recompute, cards = timed(lambda: recompute_scorecards(data), args.repeats)
    bad = mismatches(cards, data.seats_df())
    board_t, board = timed(lambda: leaderboard(data, n_resamples=1000), max(1, args.repeats // 2))
    summary_t, summary = timed(lambda: series_summary(data, "bat_00"), args.repeats)
    seat_forest(summary, path=plot)

    rec_med, board_med = statistics.median(recompute), statistics.median(board_t)
    print(json.dumps({
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "duckdb_threads": threads, "arrow_threads": pyarrow.cpu_count(),
                    "load_avg_1m": round(os.getloadavg()[0], 2)},
        "data": {"dir": args.data_dir, "events": info["events"], "matches": info["matches"],
                 "seat_rows": len(cards), "series": info["series"], "generate_s": info["generate_s"],
                 "units": {"events": "rows", "matches": "count", "generate_s": "s"}},
        "open_data_dir_s": round(open_s, 4),
        "scorecard_recompute": {**figure(recompute), "first_call_s": round(first[0], 3),
                                "events_per_s": round(info["events"] / rec_med),
                                "mismatched_cells_vs_stored": bad},
        "leaderboard": {**figure(board_t), "resamples": 1000, "matches": board.n_matches,
                        "models": len(board.rows)},
        "series_summary": {**figure(summary_t), "batch_id": "bat_00", "runs": summary["runs"],
                           "seats": len(summary["seats"]), "interval_method": summary["seats"][0]["fitness_index"]["method"]},
        "targets": {
            "scorecard_recompute_s": target(TARGETS["scorecard_recompute_s"], round(rec_med, 3), info["events"]),
            "leaderboard_1000_resamples_s": target(TARGETS["leaderboard_1000_resamples_s"], round(board_med, 3),
                                                   info["events"]),
        },
        "plot": plot,
        "note": "targets compare the median of warm repeats (min/median/max beside it) on one thread; "
                "first_call_s includes loading the compiled kernels",
    }))


if __name__ == "__main__":
    main()
