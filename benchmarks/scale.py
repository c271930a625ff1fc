"""Where the service's CPU goes per scripted run, and how many model matches it plays at once. Prints
one JSON object.

`studio serve` runs in its own process as users run it (a private local Ray, one scripted worker per
core) on a fresh data dir in one temporary directory, removed at the end with Ray's session files.
CPU is read from /proc for every process under it (benchmarks/lib/procs.py), so the service is
measured without being instrumented.

    python benchmarks/scale.py [--quick] [--series 4] [--trials 50] [--ticks 300] [--poll 0.5]
                               [--model RUNS:TICKS:LATENCY_MS ...] [--scripted-only] [--model-timeout 900] [--events derived|stored]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.figures import spread, target
from benchmarks.lib.parts import by_group, by_name, by_part, name
from benchmarks.lib.procs import Sampler, cores, threads
from benchmarks.lib.raytmp import ray_tmpdir

SERIES_MAX = 50  # the Lab plan's trials per series
CONFIG = """[plans.lab]
requests_per_minute = 1000000
queued_runs = 1000
[limits]
refused_per_address_per_minute = 1000000
"""
TERMINAL = ("finished", "failed", "cancelled")
QUIET_CORES = 0.15  # the service's own idle (Ray's heartbeats) stays well below this
MODEL_PHASES = ("100:10:2000", "1000:5:500")
QUICK_MODEL_PHASES = ("6:10:50", "20:5:20")
API_MIN_TICKS = 10  # a season is 10 to 2000 ticks (the API refuses shorter ones)


# -- the service -------------------------------------------------------------------------------------
def quiet(sampler: Sampler, timeout: float = 120) -> tuple:
    """Marks a second apart until one second passes under QUIET_CORES: (the mark where the quiet
    second began, seconds waited)."""
    t0 = time.monotonic()
    prev = sampler.mark()
    while True:
        time.sleep(1.0)
        now = sampler.mark()
        if cores(prev, now) < QUIET_CORES or time.monotonic() - t0 > timeout:
            return prev, time.monotonic() - t0
        prev = now


def launch_series(c, body: dict, runs: int) -> list[str]:
    """runs as series of at most SERIES_MAX; their batch ids."""
    out, left = [], runs
    while left > 0:
        n = min(SERIES_MAX, left)
        r = c.post("/api/v1/runs", json={**body, "trials": n} if n > 1 else {k: v for k, v in body.items()
                                                                              if k != "trials"})
        assert r.status_code == 201, r.text
        got = r.json()
        out.append(got["batch"]["batch_id"] if got["batch"] else got["run"]["run_id"])
        left -= n
    return out


def runs_of(c, ids: list[str]) -> list[dict]:
    """Every run of these series (a lone run's id stands for itself)."""
    out = []
    for i in ids:
        if i.startswith("run_"):
            out.append(c.get(f"/api/v1/runs/{i}").json()["run"])
            continue
        cursor = None
        while True:
            params = {"batch_id": i, "limit": 100} | ({"cursor": cursor} if cursor else {})
            page = c.get("/api/v1/runs", params=params).json()
            out += page["runs"]
            cursor = page["next_cursor"]
            if not cursor:
                break
    return out


# -- scripted runs -----------------------------------------------------------------------------------
def follow(url: str, token: str, batch_id: str, poll: float, reads: list, stop: threading.Event) -> None:
    """A client following one series through its batch read every `poll` s until it ends."""
    import httpx

    from tests.api.util import bearer

    with httpx.Client(base_url=url, headers=bearer(token), timeout=120) as c:
        while not stop.is_set():
            t0 = time.perf_counter()
            r = c.get(f"/api/v1/batches/{batch_id}")
            reads.append(time.perf_counter() - t0)
            assert r.status_code == 200, r.text
            if r.json()["batch"]["status"] in TERMINAL:
                return
            stop.wait(max(0.0, poll - (time.perf_counter() - t0)))


def window(a, c, url: str, token: str, sampler: Sampler, head: int, followed: bool) -> dict:
    """`--series` series launched together and played to the end, CPU per process from the first launch
    to the service falling quiet. followed: a client per series reads its batch every `--poll` s;
    else one client asks every `--poll` s whether any run of the account is left (one-row list reads)."""
    from benchmarks.series import body

    start, threads0, client0 = sampler.mark(), threads(head), time.process_time()
    t0 = time.perf_counter()
    ids = [i for _ in range(a.series) for i in launch_series(c, body(a.trials, a.ticks), a.trials)]
    reads: list[float] = []
    if followed:
        stop = threading.Event()
        followers = [threading.Thread(target=follow, args=(url, token, i, a.poll, reads, stop)) for i in ids]
        for f in followers:
            f.start()
        for f in followers:
            f.join(timeout=1800)
    else:
        while not idle_account(c):
            time.sleep(a.poll)
    played_s = time.perf_counter() - t0
    end, waited = quiet(sampler)
    threads1 = threads(head)
    client_cpu = time.process_time() - client0
    runs = runs_of(c, ids)
    assert all(r["status"] == "finished" for r in runs), [r["error"] for r in runs if r["status"] != "finished"][:3]
    n = len(runs)
    procs = sampler.between(start, end, sampler.titles())
    per_group = by_group(procs, head, n)
    head_ms = per_group["head"]
    thread_ms = {k: round(1000 * (v - threads0.get(k, 0.0)) / n, 3)
                 for k, v in sorted(threads1.items(), key=lambda kv: -(kv[1] - threads0.get(kv[0], 0.0)))
                 if v - threads0.get(k, 0.0) > 0}
    return {
        "runs": runs,
        "figures": {
            "runs": n,
            "series_wall_s": {"value": round(played_s, 2), "unit": "s", "note": "first launch to every series ended"},
            "window_s": {"value": round(end.at - start.at, 2), "unit": "s",
                         "note": "first launch to the service falling quiet after the last run"},
            "cpu_ms_per_run_by_group": {**per_group, "unit": "ms of CPU per run"},
            "cpu_ms_per_run_all_processes": {"value": round(sum(per_group.values()), 3), "unit": "ms"},
            "cpu_ms_per_run_by_process": by_name(procs, head, n),
            "head_cpu_ms_per_run_by_thread": {**thread_ms, "unit": "ms", "note": "the head's live threads by OS "
                                              "thread name (Python threads all carry the program's name)"},
            "head_ceiling_runs_per_s": {"value": round(1000 / head_ms, 1) if head_ms else None, "unit": "runs/s",
                                        "note": "1000 / head ms per run"},
            "client_reads": {**(spread([1000 * x for x in reads], "ms", 1) if reads else {"unit": "ms"}),
                             "reads": len(reads), "note": "client-side latency of GET /api/v1/batches/:id"}
            if followed else {"note": f"one-row GET /api/v1/runs?status=... every {a.poll} s"},
            "client_cpu_ms_per_run": {"value": round(1000 * client_cpu / n, 3), "unit": "ms",
                                      "note": "this benchmark's own process (launches, reads), not in the figures"},
            "quiet_wait_s": round(waited, 1),
        },
    }


def scripted(a, url: str, token: str, sampler: Sampler, head: int) -> tuple[dict, list]:
    """After an untimed warm-up series, `--series` series of `--trials` runs of the base world (16 local
    seats + the 8 anchors of two anchor lists, `--ticks` ticks) launched together, a client per series
    following its batch read. The window runs to the moment the service falls quiet after the last run,
    so the archiving and compaction that follow are in it. CPU per run played is grouped by part (the
    head, the series summaries' actors, the compactor, the recorder, the scripted workers over the engine
    alone, other Ray workers, Ray's own processes) so a regression shows where it lives; the head's
    ceiling in runs/s is 1000 / its ms per run. A second window with nobody reading the batches tells
    the batch reads' cost from the data path's (`--quick` skips it). The engine alone plays the same
    matches, their effective env and roster read back through the API, in this process."""
    import httpx

    from benchmarks.series import body
    from tests.api.util import bearer

    with httpx.Client(base_url=url, headers=bearer(token), timeout=120) as c:
        say("warm-up series")
        warm = launch_series(c, body(max(2, a.trials // 4), a.ticks), max(2, a.trials // 4))  # workers up
        wait_series(c, warm, 600)
        quiet(sampler)
        idle_a = sampler.mark()
        time.sleep(2.0)
        idle_b = sampler.mark()
        idle = by_group(sampler.between(idle_a, idle_b, sampler.titles()), head, idle_b.at - idle_a.at)
        say("scripted series, followed through their batch reads")
        followed = window(a, c, url, token, sampler, head, followed=True)
        unfollowed = None
        if not a.quick:
            say("scripted series, nobody reading their batches")
            unfollowed = window(a, c, url, token, sampler, head, followed=False)["figures"]
    say("the engine alone")
    alone = engine_alone(followed["runs"])
    figures = followed["figures"]
    head_ms = figures["cpu_ms_per_run_by_group"]["head"]
    ratio = figures["cpu_ms_per_run_all_processes"]["value"] / alone["cpu_ms_per_run"]
    window_s = figures["window_s"]["value"]
    figures |= {
        "engine_alone": alone,
        "cpu_ms_per_run_by_part": by_part(figures["cpu_ms_per_run_by_process"], figures["cpu_ms_per_run_by_group"],
                                          alone["cpu_ms_per_run"]),
        "all_processes_over_engine_alone": {"value": round(ratio, 2), "unit": "x"},
        "idle_cpu_ms_per_s_by_group": {**idle, "unit": "ms of CPU per wall second, the service idle before the "
                                       "window"},
        "idle_share_ms_per_run_by_group": {**{g: round(v * window_s / figures["runs"], 3) for g, v in idle.items()},
                                           "unit": "ms", "note": "what the idle rates above cost over the window, "
                                           "per run: background, not the runs' own work"},
        "without_batch_reads": unfollowed,
    }
    targets = [
        target("head CPU per scripted run, a client following each series every "
               f"{a.poll} s", "<= 1.0", round(head_ms, 3), "ms", head_ms <= 1.0,
               ceiling_runs_per_s=figures["head_ceiling_runs_per_s"]["value"]),
        target("all-process CPU per scripted run over the engine alone", "<= 2", round(ratio, 2), "x", ratio <= 2),
    ]
    return figures, targets


def wait_series(c, ids: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for i in ids:
        while c.get(f"/api/v1/batches/{i}").json()["batch"]["status"] not in TERMINAL:
            assert time.monotonic() < deadline, f"series {i} did not end within {timeout} s"
            time.sleep(0.5)


def engine_alone(runs: list[dict]) -> dict:
    """The same matches built, played and scored here, one after another: CPU per run."""
    from engine.scenario import build_match, seat_specs
    from engine.warm import warm

    warm()
    cpu = []
    for r in runs:
        eff = r["effective"]
        t0 = time.thread_time()
        m = build_match(eff["season_ticks"], eff["env"], seat_specs([s["model"] for s in r["roster"]]))
        m.run()
        m.results()
        cpu.append(time.thread_time() - t0)
    return {"cpu_ms_per_run": round(1000 * statistics.mean(cpu), 3),
            "per_run": spread([1000 * x for x in cpu], "ms", 3), "note": "build, play and score, in-process, "
            "the same matches (effective env and roster); cpu_ms_per_run is the mean"}


# -- model matches -----------------------------------------------------------------------------------
class Provider:
    """tests/seats/fake_provider.py's lean app in a child process, answering after a fixed delay."""

    def __init__(self, delay_ms: int):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.seats.fake_provider", "--delay-ms", str(delay_ms),
                                      "--lean"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._url = None

    @property
    def url(self) -> str:
        """Once the server listens (it prints its port): it starts while the service does."""
        if self._url is None:
            self._url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}"
        return self._url

    def cpu_s(self) -> float:
        from benchmarks.lib.procs import stat

        s = stat(f"/proc/{self.proc.pid}/stat")
        return s[2] if s else 0.0

    def close(self) -> None:
        self.proc.stdin.close()  # the server exits when its stdin closes
        self.proc.wait(timeout=20)


def parse_phase(spec: str) -> dict:
    runs, ticks, latency = (int(x) for x in spec.split(":"))
    return {"runs": runs, "ticks": max(ticks, API_MIN_TICKS), "asked_ticks": ticks, "latency_ms": latency}


def idle_account(c) -> bool:
    """No run of this account left to play (the order of the checks follows a run's states)."""
    def any_in(status: str) -> bool:
        return bool(c.get("/api/v1/runs", params={"status": status, "limit": 1}).json()["runs"])
    if any_in("running"):
        return False
    return not any(any_in(s) for s in ("queued", "launching", "running"))


def at_once(runs: list[dict]) -> int:
    """The most runs playing at the same moment (started_at_ms to finished_at_ms)."""
    edges = sorted([(r["started_at_ms"], 1) for r in runs if r["started_at_ms"]]
                   + [(r["finished_at_ms"], -1) for r in runs if r["started_at_ms"] and r["finished_at_ms"]])
    best = cur = 0
    for _, d in edges:
        cur += d
        best = max(best, cur)
    return best


def model_phase(phase: dict, url: str, token: str, provider: Provider, sampler: Sampler, head: int,
                timeout: float) -> tuple[dict, list]:
    """The phase's runs (2 model seats, no anchors) launched at once as series of up to 50 (the Lab plan's
    ceiling) against a fake provider that answers after a fixed latency, then waited to the last end.
    Time from the first launch to the last finished_at_ms, against the ideal (ticks x latency); how
    many played at once; the service's peak memory (summed RSS, sampled) and CPU per model turn."""
    import httpx

    from tests.api.util import bearer

    seats = 2
    # grading off: the phase measures matches playing at once; decision grading, on by default for model
    # seats, runs after each match on the same cores (benchmarks/grading.py measures it)
    body = {"scenario_id": "svc:custom-base-v1", "season_ticks": phase["ticks"], "env": {"anchors": []},
            "grading": "off", "roster": [{"model": "openai/gpt-4o-mini", "name": f"m{k}"} for k in range(seats)]}
    ideal = phase["ticks"] * phase["latency_ms"] / 1000
    with httpx.Client(base_url=url, headers=bearer(token), timeout=120) as c:
        start, p0 = sampler.mark(peak=True), provider.cpu_s()
        t0_ms = time.time() * 1000
        ids = launch_series(c, body, phase["runs"])
        launch_s = time.time() - t0_ms / 1000
        deadline = time.monotonic() + timeout
        while not idle_account(c) and time.monotonic() < deadline:
            time.sleep(0.25)
        seen_s = time.time() - t0_ms / 1000
        end = sampler.mark()
        sampler.drop(start)
        hwm = sampler.rss_hwm_kb()
        provider_cpu = provider.cpu_s() - p0
        runs = runs_of(c, ids)
    ended = [r for r in runs if r["status"] in TERMINAL]
    finished = [r for r in runs if r["status"] == "finished"]
    done_s = (max(r["finished_at_ms"] for r in ended) - t0_ms) / 1000 if len(ended) == len(runs) else None
    turns = len(finished) * seats * phase["ticks"]
    procs = sampler.between(start, end, sampler.titles())
    label = f"{phase['runs']} runs, {seats} model seats x {phase['ticks']} ticks, {phase['latency_ms']} ms latency"
    fig = {
        "runs": phase["runs"], "seats": seats, "ticks": phase["ticks"], "latency_ms": phase["latency_ms"],
        "status_counts": {s: sum(r["status"] == s for r in runs) for s in sorted({r["status"] for r in runs})},
        "first_error": next((r["error"] for r in runs if r["error"]), None),
        "finish_s": {"value": None if done_s is None else round(done_s, 2), "unit": "s",
                     "note": "first launch to the last run's finished_at_ms"},
        "ideal_s": {"value": ideal, "unit": "s", "note": "ticks x latency"},
        "finish_over_ideal": {"value": None if done_s is None else round(done_s / ideal, 2), "unit": "x"},
        "launch_s": {"value": round(launch_s, 2), "unit": "s", "note": "the POSTs of every series"},
        "seen_done_s": {"value": round(seen_s, 2), "unit": "s", "note": "first launch to the client seeing no run left"},
        "run_end_s": spread([(r["finished_at_ms"] - t0_ms) / 1000 for r in ended], "s", 2,
                            note="first launch to each run's end") if ended else None,
        "run_play_s": spread([(r["finished_at_ms"] - r["started_at_ms"]) / 1000 for r in ended if r["started_at_ms"]],
                             "s", 2, note="each run's start to its end") if ended else None,
        "most_playing_at_once": at_once(ended),
        "peak_rss_mb_sampled": {"value": round(start.peak_rss_kb / 1024), "unit": "MB",
                                "note": "summed RSS of the service's processes, every 0.25 s"},
        "peak_pss_mb_sampled": {"value": round(start.peak_pss_kb / 1024), "unit": "MB",
                                "note": "the same with shared pages counted once (proportional set size)"},
        "rss_hwm_mb_summed": {"value": round(hwm / 1024), "unit": "MB", "note": "each live process's VmHWM "
                              "(its peak since it started), summed, after the phase"},
        "cpu_ms_per_turn_by_group": {**by_group(procs, head, max(turns, 1)), "unit": "ms of CPU per model turn"},
        "cpu_ms_per_turn_by_process": by_name(procs, head, max(turns, 1)),
        "provider_cpu_ms_per_turn": {"value": round(1000 * provider_cpu / max(turns, 1), 3), "unit": "ms"},
    }
    if phase["asked_ticks"] != phase["ticks"]:
        fig["note"] = f"asked for {phase['asked_ticks']} ticks; a season is at least {API_MIN_TICKS} (SPEC.md)"
    goal = 35 if (phase["runs"], phase["ticks"], phase["latency_ms"]) == (100, 10, 2000) else 30
    ok = done_s is not None and len(finished) == len(runs) and done_s <= goal
    return fig, [target(f"{label}: all finished", f"<= {goal}", fig["finish_s"]["value"], "s", ok,
                        ideal_s=ideal)]


# -- the whole run -----------------------------------------------------------------------------------
def say(what: str) -> None:
    """Progress on stderr: a full run takes minutes."""
    print(f"scale.py {time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


def run(a, tmp: Path) -> dict:
    """Writes into the data dir's config.toml, as operator config: the Lab plan's request rate and the
    refusals per address raised out of the way, and its queued launches raised so the biggest phase's
    series are admitted together. The requests in flight per provider key stay the shipped defaults:
    every phase plays on one key whose allowance has to grow to what the phase asks of it
    (orchestrator/seats/limits.py), as it would for a user who never heard of the setting."""
    from benchmarks.series import serve
    from orchestrator import accounts, auth
    from orchestrator.core import Core
    from orchestrator.seats import keys
    from tests.api.util import free_port

    phases = [parse_phase(p) for p in a.model]
    providers = [Provider(p["latency_ms"]) for p in phases]
    service = None
    try:
        data_dir = tmp / "data"
        data_dir.mkdir()
        (data_dir / "config.toml").write_text(CONFIG + f'[archive]\nevents = "{a.events}"\n')
        core = Core.open(data_dir)

        def account(k: int, provider: Provider | None = None) -> str:
            email = f"bench{k}@example.org"
            accounts.create_account(core, email, plan="lab", verified=True)
            if provider:  # stored by the operator: a loopback base URL is theirs to allow
                keys.set_key(core, provider="router", key="k-bench", email=email, base_url=provider.url + "/v1")
            return auth.mint(core, email, scopes=auth.SCOPES)[0]
        say("starting studio serve")
        service = serve(data_dir, port := free_port(), tmp / "serve.log")
        say("serving")
        tokens = [account(0)] + [account(k + 1, p) for k, p in enumerate(providers)]
        url = f"http://127.0.0.1:{port}"
        sampler = Sampler(service.pid).start()
        try:
            figures, targets = scripted(a, url, tokens[0], sampler, service.pid)
            figures = {"scripted": figures, "model": []}
            for phase, prov, token in zip(phases, providers, tokens[1:]):
                quiet(sampler)
                say(f"model phase {phase}")
                fig, tg = model_phase(phase, url, token, prov, sampler, service.pid, a.model_timeout)
                figures["model"].append(fig)
                targets += tg
            hwm_mb = round(sampler.rss_hwm_kb() / 1024)
            workers = sorted({name(p.title) for p in sampler.procs.values() if p.title.startswith("ray::")})
        finally:
            sampler.stop()
    finally:
        if service is not None:
            service.send_signal(signal.SIGTERM)
            try:
                service.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(service.pid, signal.SIGKILL)
        for p in providers:
            p.close()
    return {
        "benchmark": "scale",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "load_avg_1m_at_end": round(os.getloadavg()[0], 2)},
        "setup": {"series": a.series, "trials_per_series": a.trials, "agents": 24, "ticks": a.ticks,
                  "batch_read_every_s": a.poll, "model_phases": a.model, "ray_worker_kinds": workers,
                  "operator_config": CONFIG.strip().splitlines() + ["[archive]", f'events = "{a.events}"'],
                  "groups": {"head": "the `studio serve` process",
                             "workers": "Ray's worker processes (ray::<actor or task>): the match workers, the "
                                        "Recorder, tasks; by process name in *_by_process",
                             "ray_system": "raylet, GCS, Ray's agents and monitors"}},
        "figures": {**figures, "service_rss_hwm_mb_summed_at_end": hwm_mb},
        "targets": targets,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small smoke version: 2 series of 4 trials x 60 ticks, "
                    f"model phases {' and '.join(QUICK_MODEL_PHASES)}")
    ap.add_argument("--series", type=int, default=None, help="concurrent scripted series (default 4)")
    ap.add_argument("--trials", type=int, default=None, help="runs per scripted series (default 50)")
    ap.add_argument("--ticks", type=int, default=None, help="ticks per scripted run (default 300)")
    ap.add_argument("--poll", type=float, default=0.5, help="seconds between a follower's batch reads")
    ap.add_argument("--model", action="append", default=None, metavar="RUNS:TICKS:LATENCY_MS",
                    help=f"a model phase (repeatable; default {' and '.join(MODEL_PHASES)}); ticks below "
                    f"{API_MIN_TICKS} play {API_MIN_TICKS}")
    ap.add_argument("--scripted-only", action="store_true", help="no model phases: the scripted figures alone")
    ap.add_argument("--model-timeout", type=float, default=900, help="seconds a model phase may take")
    ap.add_argument("--events", choices=("derived", "stored"), default="derived",
                    help="config [archive] events: scripted matches keep their inputs (derived) or their logs")
    a = ap.parse_args()
    a.series = a.series or (2 if a.quick else 4)
    a.trials = a.trials or (4 if a.quick else 50)
    a.ticks = a.ticks or (60 if a.quick else 300)
    a.model = [] if a.scripted_only else a.model or list(QUICK_MODEL_PHASES if a.quick else MODEL_PHASES)
    with ray_tmpdir("sc") as tmp:
        result = run(a, tmp)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
