"""Series through the API vs the engine alone on the same cores, interleaved. Prints one JSON object.

Everything it starts (`studio serve` as users run it, its Ray, the engine-alone processes) and this
polling process are pinned to the same `--cores` CPUs: one Ray worker or engine process per core. The
two phases swap order every repeat so drift on a shared machine hits both. Everything it writes, Ray's
session files included, lives in one temporary directory removed at the end.

    python benchmarks/series.py [--cores 2] [--trials 50] [--ticks 300] [--repeats 3] [--singles 20]
                                [--events derived|stored]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.procs import Sampler

CONFIG = "[plans.lab]\nrequests_per_minute = 1000000\n[limits]\nrefused_per_address_per_minute = 1000000\n"
POLICIES = ("honest-trader", "greedy-harvester", "aggressive-raider", "random")


def body(trials: int, ticks: int) -> dict:
    return {"scenario_id": "svc:custom-base-v1", "season_ticks": ticks, "trials": trials,
            "roster": [{"model": f"local/{POLICIES[k % 4]}"} for k in range(16)],
            "env": {"anchors": [POLICIES[k % 4] for k in range(8)]}}


def spread(values: list[float], digits: int = 2) -> dict:
    return {"min": round(min(values), digits), "median": round(statistics.median(values), digits),
            "max": round(max(values), digits)}


# -- the engine alone --------------------------------------------------------------------------------
def play_alone(match: tuple) -> float:
    """Build, play and score one match; its seconds."""
    from engine.scenario import build_match, seat_specs

    ticks, env, models = match
    t0 = time.perf_counter()
    m = build_match(ticks, env, seat_specs(models))
    m.run()
    m.results()
    return time.perf_counter() - t0


def engine_phase(pool, matches: list[tuple], cpu: list | None = None) -> float:
    """Wall seconds of the matches over the pool; cpu: where each match's CPU seconds go."""
    t0 = time.perf_counter()
    got = pool.map(_play_timed, matches, chunksize=1)
    if cpu is not None:
        cpu += [c for _, c in got]
    return time.perf_counter() - t0


def _play_timed(match: tuple) -> tuple[float, float]:
    t0 = time.thread_time()
    wall = play_alone(match)
    return wall, time.thread_time() - t0


# -- through the API ---------------------------------------------------------------------------------
def _idle(c, batch_id: str) -> bool:
    """No run of the series left to play. A run's results are stored in the same transaction that
    marks it finished; each request asks for at most one run of one state. While the series plays,
    one request (a running run) answers; the proof that it is done asks queued, launching, running
    in the order a run moves through them, so no run can slip past between the three."""
    def any_in(status: str) -> bool:
        return bool(c.get("/api/v1/runs", params={"batch_id": batch_id, "status": status, "limit": 1}).json()["runs"])
    if any_in("running"):
        return False
    return not any(any_in(s) for s in ("queued", "launching", "running"))


def api_phase(c, trials: int, ticks: int, data_dir: Path) -> tuple[float, list[tuple]]:
    """Launch to every result readable and the series compacted: the compaction runs off the request
    path, but on the same cores, so the phase that pays for it is the one that caused it."""
    from analytics.archive.layout import SEATS_DIR, series_archived

    t0 = time.perf_counter()
    r = c.post("/api/v1/runs", json=body(trials, ticks))
    assert r.status_code == 201, r.text
    series = r.json()["batch"]
    while not _idle(c, series["batch_id"]):
        time.sleep(0.02)
    # the seat rows are published last (and are all a scripted match keeps when its log is derived)
    while not series_archived(data_dir, SEATS_DIR, series["batch_id"]):
        time.sleep(0.01)
    wall = time.perf_counter() - t0
    matches = []
    for rid in series["run_ids"]:
        run = c.get(f"/api/v1/runs/{rid}").json()["run"]
        assert run["status"] == "finished", run["error"]
        matches.append((run["effective"]["season_ticks"], run["effective"]["env"], [s["model"] for s in run["roster"]]))
    return wall, matches


def single_overhead(c, ticks: int) -> float:
    """POST to results readable for one run, minus the engine's own time for the same match (ms)."""
    t0 = time.perf_counter()
    r = c.post("/api/v1/runs", json=body(1, ticks) | {"trials": 1})
    assert r.status_code == 201, r.text
    rid = r.json()["run"]["run_id"]
    while True:
        got = c.get(f"/api/v1/runs/{rid}").json()
        if got["results"] is not None:
            break
        assert got["run"]["status"] not in ("failed", "cancelled"), got["run"]["error"]
        time.sleep(0.002)
    wall = time.perf_counter() - t0
    eff = got["run"]["effective"]
    engine = min(play_alone((eff["season_ticks"], eff["env"], [s["model"] for s in got["run"]["roster"]]))
                 for _ in range(3))
    return 1000 * (wall - engine)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--trials", type=int, default=50)  # the Lab plan's series ceiling
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--singles", type=int, default=20)
    ap.add_argument("--events", choices=("derived", "stored"), default="derived",
                    help="config [archive] events: scripted matches keep their inputs (derived) or their logs")
    a = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))[: a.cores]
    os.sched_setaffinity(0, cores)  # inherited by Ray's processes and the engine-alone pool

    tmp = tempfile.mkdtemp(prefix="sb", dir="/tmp")  # short: Ray's socket paths live under it
    os.environ["RAY_TMPDIR"] = tmp
    os.makedirs(os.path.join(tmp, "ray"), exist_ok=True)
    try:
        result = run(a, cores, Path(tmp))
    finally:  # the service stopped its Ray first: nothing writes there any more
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result, indent=1))


def serve(data_dir: Path, port: int, log: Path) -> subprocess.Popen:
    """`studio serve` as it runs for users: its own process (uvicorn, dispatcher, archiver, a local Ray
    with one worker per core), on the pinned cores it inherits. Ready once the API answers."""
    from tests.api.util import wait_until_up

    studio = Path(sys.executable).with_name("studio")
    proc = subprocess.Popen([str(studio), "serve", "--data-dir", str(data_dir), "--port", str(port), "--no-bootstrap",
                             "--log-level", "warning"], stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    wait_until_up(f"http://127.0.0.1:{port}", proc, timeout=300, log=log)  # a cold kernel cache compiles first
    return proc


def run(a, cores: list[int], tmp: Path) -> dict:
    """Each repeat plays one `--trials` series of the base world (16 local seats + the 8 anchors of two
    anchor lists) through the REST API, launch to every result readable, and the engine alone plays
    the same matches, building and scoring included. Then `--singles` single runs, one at a time on the
    idle service, give the per-run overhead. The service's processes are sampled from /proc over the
    API phases (benchmarks/lib/procs.py) for each part's CPU per run, as benchmarks/scale.py names them."""
    import httpx

    from benchmarks.lib.parts import GROUPS, RAY_OWN, by_name, by_part
    from orchestrator import accounts, auth
    from orchestrator.core import Core
    from tests.api.util import bearer, free_port

    data_dir = tmp / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text(CONFIG + f'[archive]\nevents = "{a.events}"\n')
    core = Core.open(data_dir)
    accounts.create_account(core, "bench@example.org", plan="lab", verified=True)
    token, _ = auth.mint(core, "bench@example.org", scopes=auth.SCOPES)
    service = serve(data_dir, port := free_port(), tmp / "serve.log")
    pool = mp.get_context("spawn").Pool(len(cores))
    api_s, alone_s, order, alone_cpu = [], [], [], []
    sampler = Sampler(service.pid).start()
    parts: dict[str, float] = {}  # CPU seconds of each group of the service's processes over the api phases

    def api(c):
        start = sampler.mark()
        wall, matches = api_phase(c, a.trials, a.ticks, data_dir)
        procs = sampler.between(start, sampler.mark(), sampler.titles())
        for k, v in by_name(procs, service.pid, 1).items():
            parts[k] = parts.get(k, 0.0) + v["ms"] / 1000
        return wall, matches
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer(token), timeout=60) as c:
            # the first series after start, against what the estimate promised for it; not in the ratio
            est = c.post("/api/v1/runs/estimate", json=body(a.trials, a.ticks))
            assert est.status_code == 200, est.text
            promised = est.json()["batch"]["wall_clock_ms"]
            first_s, matches = api_phase(c, a.trials, a.ticks, data_dir)
            engine_phase(pool, matches)
            for rep in range(a.repeats):
                if rep % 2 == 0:
                    wall, matches = api(c)
                    api_s.append(wall)
                    alone_s.append(engine_phase(pool, matches, alone_cpu))
                    order.append("api, engine")
                else:
                    alone_s.append(engine_phase(pool, matches, alone_cpu))
                    wall, matches = api(c)
                    api_s.append(wall)
                    order.append("engine, api")
            overhead = [single_overhead(c, a.ticks) for _ in range(a.singles)]
    finally:
        sampler.stop()
        pool.close()
        pool.join()
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(service.pid, signal.SIGKILL)
    n = a.trials
    api_rate = [n / s for s in api_s]
    alone_rate = [n / s for s in alone_s]
    ratios = [x / y for x, y in zip(api_rate, alone_rate)]  # each repeat's pair, measured side by side
    ratio, med = statistics.median(ratios), statistics.median(overhead)
    first = {"wall_ms": round(1000 * first_s), "estimate_ms": promised}
    played = n * a.repeats
    engine_ms = 1000 * statistics.mean(alone_cpu)
    by_process = {k: {"ms": round(1000 * v / played, 3)} for k, v in sorted(parts.items(), key=lambda kv: -kv[1])}
    groups = {g: 0.0 for g in GROUPS}
    for k, v in parts.items():
        groups["head" if k == "studio serve (head)" else "workers" if k.startswith("ray::") and k[5:] not in RAY_OWN
               else "ray_system"] += 1000 * v / played
    groups = {g: round(v, 3) for g, v in groups.items()}
    return {
        "benchmark": "series",
        "setup": {"events": a.events, "cores": len(cores), "ray_workers": len(cores), "engine_processes": len(cores),
                  "trials_per_series": n, "agents": 24, "ticks": a.ticks, "repeats": a.repeats,
                  "phase_order": order, "single_runs": a.singles},
        "figures": {
            "api_runs_per_s": {**spread(api_rate), "unit": "runs/s"},
            "engine_alone_runs_per_s": {**spread(alone_rate), "unit": "runs/s",
                                        "note": "match building, play and scoring, one process per core"},
            "ratio_api_over_engine": {**spread(ratios, 3), "unit": "ratio", "note": "per repeat"},
            "first_series": {**first, "unit": "ms", "note": "the first series after `studio serve` is ready, "
                             "launch to every result readable, beside the estimate's wall_clock_ms"},
            "cpu_ms_per_run_by_part": {**by_part(by_process, groups, round(engine_ms, 3)),
                                       "note": "every process of the service over the api phases, per run played"},
            "cpu_ms_per_run_by_process": by_process,
            "per_run_overhead_ms": {**spread(overhead, 1), "unit": "ms",
                                    "note": "POST to results readable, minus the engine's time for that match"},
        },
        "targets": [
            # issue 28 set the goal for 2 cores at 0.5 (it was 0.7 before the scale-out)
            {"target": "API runs/s vs engine alone, same cores, interleaved", "goal": ">= 0.5",
             "measured": round(ratio, 3), "met": ratio >= 0.5},
            {"target": "first series' wall clock within its estimate", "goal": f"<= {promised['high']} ms",
             "measured": first["wall_ms"], "unit": "ms", "met": first["wall_ms"] <= promised["high"]},
            {"target": "per-run overhead, POST to readable result, median", "goal": "< 30 ms",
             "measured": round(med, 1), "unit": "ms", "met": med < 30},
        ],
    }


if __name__ == "__main__":
    main()
