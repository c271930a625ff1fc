"""Series through the API vs the engine alone, in one run. Prints one JSON object.

200 scripted trials of the base world (16 local seats + the 8 anchors of anchors-v1 twice = 24
agents, 2000 ticks) launched through the REST API as four 50-trial series on a lab account, timed
from the first launch until every result is readable; then the engine alone plays the same 200
matches (same seeds) back to back in this process.

    python benchmarks/series.py [--trials 50] [--series 4] [--ticks 2000]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIG = "[plans.lab]\nrequests_per_minute = 1000000\n"
POLICIES = ("honest-trader", "greedy-harvester", "aggressive-raider", "random")


def body(trials: int, ticks: int) -> dict:
    return {"scenario_id": "svc:custom-base-v1", "season_ticks": ticks, "trials": trials,
            "roster": [{"model": f"local/{POLICIES[k % 4]}"} for k in range(16)],
            "env": {"anchors": [POLICIES[k % 4] for k in range(8)]}}


def through_api(n_series: int, trials: int, ticks: int) -> dict:
    import httpx

    from api.app import create_app
    from orchestrator import accounts, auth
    from orchestrator.core import Core
    from tests.api.util import bearer, free_port, start_server

    data_dir = Path(tempfile.mkdtemp(prefix="studio-series-")) / "data"
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text(CONFIG)
    core = Core.open(data_dir)
    accounts.create_account(core, "bench@example.org", plan="lab", verified=True)
    token, _ = auth.mint(core, "bench@example.org", scopes=auth.SCOPES)
    port = free_port()
    server, thread = start_server(create_app(data_dir, dispatch=True), port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer(token), timeout=60) as c:
            warm = c.post("/api/v1/runs", json=body(1, 50) | {"trials": 2}).json()["batch"]["run_ids"]
            _wait(c, warm)  # workers up and their JIT caches loaded before the clock starts
            t0 = time.perf_counter()
            batches = []
            for _ in range(n_series):
                r = c.post("/api/v1/runs", json=body(trials, ticks))
                assert r.status_code == 201, r.text
                batches.append(r.json()["batch"])
            _wait_batches(c, [b["batch_id"] for b in batches])
            wall = time.perf_counter() - t0
            runs = _wait(c, [rid for b in batches for rid in b["run_ids"]])
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    return {"wall_s": wall, "runs": runs, "workers": os.cpu_count()}


def _wait_batches(c, batch_ids: list[str]) -> None:
    """Poll until no run of any series is still active: a run's results are stored in the same
    transaction that marks it finished. Each poll asks for at most one active run per state, so the
    polling itself stays cheap next to the work it waits for."""
    pending = set(batch_ids)
    while pending:
        for b in list(pending):
            if not any(c.get("/api/v1/runs", params={"batch_id": b, "status": s, "limit": 1}).json()["runs"]
                       for s in ("queued", "launching", "running")):
                pending.discard(b)
        if pending:
            time.sleep(0.05)


def _wait(c, run_ids: list[str]) -> list[dict]:
    """Poll until every run's results are readable; returns the final run views."""
    pending, done = set(run_ids), {}
    while pending:
        for rid in list(pending):
            b = c.get(f"/api/v1/runs/{rid}").json()
            if b["results"] is not None or b["run"]["status"] in ("failed", "cancelled"):
                assert b["run"]["status"] == "finished", b["run"]["error"]
                done[rid] = b["run"]
                pending.discard(rid)
        if pending:
            time.sleep(0.02)
    return [done[r] for r in run_ids]


def engine_alone(runs: list[dict]) -> list[float]:
    from engine.scenario import build_match, seat_specs

    times = []
    for run in runs:
        eff = run["effective"]
        m = build_match(eff["season_ticks"], eff["env"], seat_specs([s["model"] for s in run["roster"]]))
        t0 = time.perf_counter()
        m.run()
        m.results()
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=4)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--ticks", type=int, default=2000)
    a = ap.parse_args()
    api = through_api(a.series, a.trials, a.ticks)
    runs = api["runs"]
    alone = engine_alone(runs)
    n = len(runs)
    api_rate = n / api["wall_s"]
    alone_rate = n / sum(alone)
    # a run's overhead: its time in the service (handed to a worker until recorded) beyond the
    # engine's own time for the same match
    overhead = sorted((r["finished_at_ms"] - r["started_at_ms"]) - 1000 * t for r, t in zip(runs, alone))
    med = statistics.median(overhead)
    p95 = overhead[int(0.95 * (len(overhead) - 1))]
    ratio = api_rate / alone_rate
    print(json.dumps({
        "benchmark": "series",
        "setup": {"series": a.series, "trials_per_series": a.trials, "runs": n, "agents": 24, "ticks": a.ticks,
                  "cpus": os.cpu_count()},
        "figures": {
            "api_runs_per_s": round(api_rate, 2), "api_wall_s": round(api["wall_s"], 3),
            "engine_alone_runs_per_s": round(alone_rate, 2), "engine_alone_s": round(sum(alone), 3),
            "engine_ms_per_match_median": round(1000 * statistics.median(alone), 2),
            "per_run_overhead_ms": {"median": round(med, 1), "p95": round(p95, 1)},
            "throughput_ratio_api_over_engine": round(ratio, 3),
            "units": "runs/s; seconds; milliseconds",
        },
        "targets": [
            {"target": "API throughput vs engine alone", "goal": ">= 0.5", "measured": round(ratio, 3),
             "met": ratio >= 0.5},
            {"target": "per-run overhead, median", "goal": "< 50 ms", "measured": round(med, 1), "unit": "ms",
             "met": med < 50},
        ],
    }, indent=1))


if __name__ == "__main__":
    main()
