"""Agents long-polling one agent seat (docs/AGENTS.md), at several crowd sizes: how soon every waiter
is answered once the seat's turn opens, whether any request is dropped, and how the API answers everyone
else meanwhile (another process asks GET /api/v1 every PROBE_EVERY_S). Prints one JSON object.

`studio serve` runs in its own process on a fresh data dir. The waiters watch seat 0 of a world run whose
seat 1 this benchmark plays, so it holds each tick open as long as it likes. The clients speak HTTP/1.1
on raw asyncio streams: a full client library would spend more of their one event loop than the server.

    .venv/bin/python benchmarks/longpoll.py [--waiters 250,500,1000] [--tokens 5] [--rounds 3] [--settle 2]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.lib.figures import spread, target
from benchmarks.lib.procs import cpu_of
from benchmarks.lib.raytmp import ray_tmpdir

CONFIG = """[plans.lab]
requests_per_minute = 100000000
[limits]
refused_per_address_per_minute = 1000000
"""
TURN_TIMEOUT_MS = 300_000  # the benchmark holds a tick open for a round: well past any round's length
WAIT_MS = 20_000
WAKE_GOAL_S = 1.0
GOAL_WAITERS = 500  # the crowd the wake-up goal is set for (issue 50); larger ones are reported beside it
PROBE_EVERY_S = 0.02


def _request(method: str, path: str, token: str | None, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    return int(head[9:12]), await reader.readexactly(length)


class Conn:
    """One keep-alive connection: a waiter's, or the benchmark's own."""

    def __init__(self, port: int, token: str):
        self.port, self.token = port, token
        self.reader = self.writer = None

    async def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict, float]:
        """(status, JSON body, epoch seconds the answer arrived)."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 20)
        self.writer.write(_request(method, path, self.token, json.dumps(body).encode() if body is not None else b""))
        status, raw = await _answer(self.reader)
        return status, json.loads(raw), time.time()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


def probe(port: int, stop, out) -> None:
    """In its own process: GET /api/v1 every PROBE_EVERY_S on one connection; [(epoch start, seconds or
    None when it failed)]. A failed probe reconnects."""
    async def go():
        reader = writer = None
        got = []
        while not stop.is_set():
            t0, w0 = time.perf_counter(), time.time()
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(_request("GET", "/api/v1", None))
                status, _ = await _answer(reader)
                got.append((w0, time.perf_counter() - t0 if status == 200 else None))
            except (OSError, asyncio.IncompleteReadError, ValueError):
                got.append((w0, None))
                writer = None
            await asyncio.sleep(PROBE_EVERY_S)
        if writer is not None:
            writer.close()
        return got
    out.send(asyncio.run(go()))


async def turn(c: Conn, run_id: str, seat: int, wait_ms: int = WAIT_MS) -> tuple[dict, float]:
    status, body, at = await c.call("GET", f"/api/v1/runs/{run_id}/seats/{seat}/turn?wait_ms={wait_ms}")
    assert status == 200, body
    return body, at


async def waiter(c: Conn, run_id: str) -> tuple[dict | None, float]:
    """A waiter's answer, or (None, when) when its request was dropped (the connection failed, or an
    answer that is not 200)."""
    try:
        status, body, at = await c.call("GET", f"/api/v1/runs/{run_id}/seats/0/turn?wait_ms={WAIT_MS}")
    except (OSError, asyncio.IncompleteReadError, ValueError):
        c.close()
        return None, time.time()
    return (body if status == 200 else None), at


async def act(c: Conn, run_id: str, seat: int, tick: int) -> None:
    status, body, _ = await c.call("POST", f"/api/v1/runs/{run_id}/seats/{seat}/actions",
                                   {"tick": tick, "actions": [{"action": "wait"}]})
    assert status == 200, body


async def crowd(a, port: int, run_id: str, tokens: list[str], n: int, me: Conn, tick: int, pid: int
                ) -> tuple[list[dict], int]:
    """`a.rounds` rounds of n waiters on seat 0; seat 0's turn of `tick` is open at the start and
    seat 1's too. Returns the rounds and the tick open at the end.

    The connections open in the first round and are kept alive after, as agents that loop on the turn
    do. A wake-up runs from the turn's opening (its deadline_ms less the turn timeout: seat 0 was in
    touch, so its clock started then) to the answer's arrival. The service's CPU per waiter leaves out
    what it spends with no waiter at all (the probes, Ray's threads), measured over the settle first."""
    waiters = [Conn(port, tokens[k % len(tokens)]) for k in range(n)]
    out = []
    cpu0, t0 = cpu_of(pid), time.perf_counter()
    await asyncio.sleep(a.settle)
    idle_cpu_per_s = (cpu_of(pid) - cpu0) / (time.perf_counter() - t0)  # the probes, Ray's threads: no waiter
    try:
        for _ in range(a.rounds):
            await act(me, run_id, 0, tick)  # seat 0 has no open turn until tick + 1
            cpu0, t_ask, t0 = cpu_of(pid), time.time(), time.perf_counter()
            asks = [asyncio.ensure_future(waiter(w, run_id)) for w in waiters]
            await asyncio.sleep(a.settle)
            t_sent = time.time()
            await act(me, run_id, 1, tick)  # tick plays; tick + 1 opens
            answers = await asyncio.gather(*asks)
            cpu = cpu_of(pid) - cpu0 - idle_cpu_per_s * (time.perf_counter() - t0)
            tick += 1
            good = [(b, at) for b, at in answers if b is not None and b["status"] == "your_turn" and b["tick"] == tick]
            assert good, answers[:3]
            opened_at = good[0][0]["deadline_ms"] / 1000 - TURN_TIMEOUT_MS / 1000
            out.append({"asked_at": t_ask, "settled_at": t_sent, "opened_at": opened_at,
                        "wake_s": [at - opened_at for _, at in good], "last_at": max(at for _, at in answers),
                        "dropped": n - len(good), "cpu_ms_per_waiter": 1000 * cpu / n,
                        "answer_bytes": len(json.dumps(good[0][0]))})
            mine, _ = await turn(me, run_id, 0, 0)  # seat 0's own view of tick + 1, asked at once
            assert mine["status"] == "your_turn" and mine["tick"] == tick, mine
    finally:
        for w in waiters:
            w.close()
    return out, tick


async def levels(a, port: int, run_id: str, tokens: list[str], pid: int) -> dict[int, list[dict]]:
    me = Conn(port, tokens[0])
    try:
        first, _ = await turn(me, run_id, 1)  # the match has begun: both seats' tick-0 turns are open
        while first["status"] != "your_turn":
            first, _ = await turn(me, run_id, 1)
        tick = first["tick"]
        await turn(me, run_id, 0)  # seat 0 in touch: its turn opens now
        got = {}
        for n in a.waiters:
            got[n], tick = await crowd(a, port, run_id, tokens, n, me, tick, pid)
        return got
    finally:
        me.close()


class Load:
    """The machine's 1-minute load average, sampled every second on a thread: on a shared machine the
    wall-clock figures scale with it, the CPU per waiter much less."""

    def __init__(self):
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(1.0)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def figures(rounds: list[dict], probes: list[tuple[float, float | None]]) -> dict:
    waiting = [s * 1000 for r in rounds for t, s in probes if s is not None and r["asked_at"] <= t < r["opened_at"]]
    waking = [s * 1000 for r in rounds for t, s in probes if s is not None and r["opened_at"] <= t <= r["last_at"]]
    lasts = [max(r["wake_s"]) for r in rounds]
    wakes = [w for r in rounds for w in r["wake_s"]]
    return {
        "wake_s_last_waiter_per_round": spread(lasts, "s", 3, rounds=[round(x, 3) for x in lasts]),
        "wake_s_every_waiter": spread(wakes, "s", 3, samples=len(wakes)),
        "dropped_waiters": sum(r["dropped"] for r in rounds),
        "cpu_ms_per_waiter_studio_serve": spread([r["cpu_ms_per_waiter"] for r in rounds], "ms", 3),
        "api_get_ms_while_waiters_connect_and_wait": spread(waiting, "ms", 1, samples=len(waiting)) if waiting else None,
        "api_get_ms_while_waiters_are_answered": spread(waking, "ms", 1, samples=len(waking)) if waking else None,
        "answer_bytes": rounds[0]["answer_bytes"],
    }


def run(a, tmp: Path) -> dict:
    import httpx

    from benchmarks.series import serve
    from orchestrator import accounts, auth
    from orchestrator.core import Core
    from tests.api.util import bearer, free_port

    data_dir = tmp / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text(CONFIG)
    core = Core.open(data_dir)
    accounts.create_account(core, "bench@example.org", plan="lab", verified=True)
    tokens = [auth.mint(core, "bench@example.org", scopes=auth.SCOPES)[0] for _ in range(a.tokens)]
    service = serve(data_dir, port := free_port(), tmp / "serve.log")
    stop, (mine, theirs) = multiprocessing.Event(), multiprocessing.Pipe()
    prober = None
    try:
        body = {"scenario_id": "svc:custom-base-v1", "season_ticks": max(10, len(a.waiters) * a.rounds + 2),
                "env": {"turn_timeout_ms": TURN_TIMEOUT_MS, "anchors": []},
                "roster": [{"provider": "agent", "model": "watched"}, {"provider": "agent", "model": "bench"}]}
        r = httpx.post(f"http://127.0.0.1:{port}/api/v1/runs", json=body, headers=bearer(tokens[0]), timeout=60)
        assert r.status_code == 201, r.text
        run_id = r.json()["run"]["run_id"]
        prober = multiprocessing.Process(target=probe, args=(port, stop, theirs))
        prober.start()
        with Load() as load:
            got = asyncio.run(levels(a, port, run_id, tokens, service.pid))
        stop.set()
        probes = mine.recv()
        prober.join(timeout=30)
    finally:
        stop.set()
        if prober is not None and prober.is_alive():
            prober.kill()
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(service.pid, signal.SIGKILL)
    by_level = {str(n): figures(rounds, probes) for n, rounds in got.items()}
    probes_dropped = sum(1 for _, s in probes if s is None)
    targets = []
    for n, rounds in got.items():
        worst = max(max(r["wake_s"]) for r in rounds)
        goal = f"<= {WAKE_GOAL_S:g}" + ("" if n == GOAL_WAITERS else f" (the goal is set for {GOAL_WAITERS})")
        targets.append(target(f"{n} waiters: the last answered after their turn opens (worst round)", goal,
                              round(worst, 3), "s", worst <= WAKE_GOAL_S))
    dropped = sum(f["dropped_waiters"] for f in by_level.values()) + probes_dropped
    targets.append(target("requests dropped (waiters and GET /api/v1 probes, every crowd size)", "== 0", dropped,
                          "requests", dropped == 0))
    return {
        "benchmark": "longpoll",
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "load_avg_1m_during": spread(load.samples, "load", 2, samples=len(load.samples)),
                    "note": "a shared machine: wall-clock figures scale with the load of other work"},
        "setup": {"waiters": a.waiters, "tokens": a.tokens, "rounds": a.rounds, "settle_s": a.settle,
                  "wait_ms": WAIT_MS, "probe_every_s": PROBE_EVERY_S, "first_round_connects": True},
        "figures": {"by_waiters": by_level, "probes": len(probes), "probes_dropped": probes_dropped},
        "targets": targets,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--waiters", default="250,500,1000", help="crowd sizes, comma-separated")
    ap.add_argument("--tokens", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settle", type=float, default=2.0, help="seconds the waiters wait before their turn opens")
    a = ap.parse_args()
    a.waiters = [int(x) for x in a.waiters.split(",")]
    with ray_tmpdir("lp") as tmp:
        result = run(a, tmp)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
